import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a scripted upstream saw of one request. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ScriptedUpstream {
  url: string;
  name: string;
  seen: SeenRequest[];
  /** Answers /health with this status (200 by default); 0 never answers (a hung server). */
  healthStatus: number;
  /** Reported by /get_load as {"load": n} when set. */
  load?: number;
  /** Streams whose connection closed before the stream ended (the client, or a proxy, went away). */
  readonly abandonedStreams: number;
  /** SSE events written so far, over all streams (what a reader can have seen by now). */
  readonly eventsWritten: number;
  close(): Promise<void>;
}

/** The SSE events every scripted `/generate` stream sends, in order, with `gapMs` between them. */
export function sseEvents(name: string): string[] {
  return [1, 2, 3].map((tokens) => `data: ${JSON.stringify({ text: 'x'.repeat(tokens), meta_info: { completion_tokens: tokens, served_by: name } })}\n\n`).concat('data: [DONE]\n\n');
}

/** `count` scripted upstreams, u0, u1, ..., started side by side; each one's close is added to `closers` (a test's cleanup list). */
export async function startScriptedUpstreams(count: number, gapMs: number, closers: (() => Promise<void>)[]): Promise<ScriptedUpstream[]> {
  const started = await Promise.all(Array.from({ length: count }, (_, index) => startScriptedUpstream(`u${index}`, gapMs)));
  for (const upstream of started) closers.push(() => upstream.close());
  return started;
}

/**
 * A tiny SGLang-like server on loopback: `/health`, `/get_load`, `/flush_cache`, and `POST /generate`, which streams
 * `sseEvents(name)` with `gapMs` between events (or answers JSON when the body says `"stream": false`).
 */
export async function startScriptedUpstream(name: string, gapMs = 0, options: { beforeNextEvent?: () => Promise<void> } = {}): Promise<ScriptedUpstream> {
  const state: { healthStatus: number; load?: number; abandonedStreams: number; eventsWritten: number } = { healthStatus: 200, abandonedStreams: 0, eventsWritten: 0 };
  const seen: SeenRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = request.url ?? '/';
      if (path === '/health') {
        if (state.healthStatus !== 0) response.writeHead(state.healthStatus).end();
        return;
      }
      if (path.startsWith('/v1/loads')) {
        // An SGLang from before /v1/loads: the router falls back to /get_load.
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
        return;
      }
      if (path === '/get_load') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ load: state.load ?? 0 }));
        return;
      }
      seen.push({ method: request.method ?? '', path, headers: request.headers, body });
      if (path === '/flush_cache') {
        response.writeHead(200).end('ok');
        return;
      }
      const parsed = body === '' ? {} : (JSON.parse(body) as { stream?: boolean });
      if (parsed.stream === false) {
        const text = JSON.stringify({ text: 'xyz', served_by: name, request_id: request.headers['x-request-id'] ?? null });
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'x-upstream': name });
      response.on('close', () => {
        if (!response.writableFinished) state.abandonedStreams++;
      });
      const events = sseEvents(name);
      let position = 0;
      const next = (): void => {
        if (response.destroyed) return;
        const event = events[position++];
        if (event === undefined) {
          response.end();
          return;
        }
        response.write(event);
        state.eventsWritten++;
        // With beforeNextEvent, the next event waits for it (a test lets it go once the reader has seen this one).
        if (options.beforeNextEvent === undefined) setTimeout(next, gapMs);
        else void options.beforeNextEvent().then(next);
      };
      next();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    name,
    seen,
    get healthStatus() {
      return state.healthStatus;
    },
    set healthStatus(status: number) {
      state.healthStatus = status;
    },
    get load() {
      return state.load;
    },
    get abandonedStreams() {
      return state.abandonedStreams;
    },
    get eventsWritten() {
      return state.eventsWritten;
    },
    set load(load: number | undefined) {
      state.load = load;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A URL where nothing listens: a port that was free a moment ago. */
export async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
