import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One step of a scripted answer, played in order. */
export type ScriptStep =
  | { write: string | Buffer }
  | { delayMs: number }
  /** Runs something at this point of the answer (e.g. moves a ManualClock before the next chunk). */
  | { run: () => void }
  /** Waits (polling every millisecond, at most 5 s) until the condition holds. */
  | { until: () => boolean }
  /** Ends the response cleanly (the last chunk of a chunked body). */
  | { end: true }
  /** Cuts the connection without ending the response. */
  | { destroy: true };

export interface ScriptedAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** Waits this long before sending anything (a slow first byte). */
  headerDelayMs?: number;
  steps: ScriptStep[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  bodyText: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: Record<string, unknown> | undefined;
}

export interface ScriptedServer {
  url: string;
  requests: RecordedRequest[];
  /** How many TCP connections the server accepted. */
  connectionCount(): number;
  close(): Promise<void>;
}

export const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/**
 * A real HTTP server on 127.0.0.1 (port 0) that answers every request with a script, for client tests: exact bytes,
 * exact pauses, cut connections.
 */
export async function startScriptedServer(script: (request: RecordedRequest) => ScriptedAnswer): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((incoming, outgoing) => {
    const pieces: Buffer[] = [];
    incoming.on('data', (piece: Buffer) => pieces.push(piece));
    incoming.on('end', () => {
      const bodyText = Buffer.concat(pieces).toString('utf8');
      let body: Record<string, unknown> | undefined;
      try {
        body = JSON.parse(bodyText) as Record<string, unknown>;
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = {
        method: incoming.method ?? '',
        path: incoming.url ?? '',
        headers: incoming.headers,
        bodyText,
        body,
      };
      requests.push(recorded);
      void play(script(recorded), outgoing);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connectionCount: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function play(answer: ScriptedAnswer, outgoing: ServerResponse): Promise<void> {
  if (answer.headerDelayMs !== undefined) await sleep(answer.headerDelayMs);
  if (outgoing.destroyed) return;
  outgoing.writeHead(answer.status ?? 200, answer.headers ?? SSE_HEADERS);
  outgoing.flushHeaders();
  for (const step of answer.steps) {
    if (outgoing.destroyed) return;
    if ('write' in step) outgoing.write(step.write);
    else if ('delayMs' in step) await sleep(step.delayMs);
    else if ('run' in step) step.run();
    else if ('until' in step) {
      const deadline = Date.now() + 5000;
      while (!step.until() && Date.now() < deadline) await sleep(1);
    }
    else if ('end' in step) outgoing.end();
    else outgoing.socket?.destroy();
  }
}

export function sleep(durationMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, durationMs));
}

/** `data: ...\n\n` for each payload: the bytes a server writes for one event each. */
export function sseEvent(data: string): string {
  return `data: ${data}\n\n`;
}
