import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clockAnchorOf, systemClock, type Clock } from '../../clock/clock.js';
import { loadProtocolClient } from '../../clients/registry.js';
import { isServelabError, ServelabError } from '../../errors/servelab-error.js';
import { readBody, RequestBodyTooLarge } from '../../routing/proxy/read-body.js';
import { refuseUntrustedRequest } from '../../routing/router/control-auth.js';
import type { RequestRecord } from '../../types/record.js';
import { runLoad } from '../run-load.js';
import { GENERATOR_PATHS, type ClockStamps, type GeneratorDone, type GeneratorFailed, type GeneratorStart } from './generator-protocol.js';

/**
 * A start message carries the slice's prompts: far larger than an LLM request, yet bounded so that a stray POST cannot
 * make the generator hold gigabytes.
 */
const MAX_START_BODY_BYTES = 1024 * 2 ** 20;

export interface GeneratorServiceOptions {
  /** The address to listen on: loopback locally, the node's address (or a wildcard) on a cluster. */
  host: string;
  /**
   * The name the coordinator reaches this host by, when it is not an address (a node name): accepted in the Host
   * header beside IP literals and `localhost` (control-auth.ts refuses other names, against DNS rebinding).
   */
  advertisedHost?: string;
  port?: number;
  /** The run's control token; undefined closes every endpoint (a generator started by hand without it). */
  controlToken: string | undefined;
  /** The generator's own clock (the system clock); its readings are what the clock exchange reports. */
  clock?: Clock;
  /**
   * Called once when the coordinator has been gone for `orphanTimeoutMs`: no records stream open and no request from it
   * for that long (default 60 s). Its run is aborted first. The command exits then, so that a generator whose
   * coordinator was killed (and whose placement could not stop it) does not go on sending.
   */
  onOrphaned?: () => void;
  orphanTimeoutMs?: number;
  /** How often that is checked (default 1 s). */
  orphanCheckIntervalMs?: number;
}

const DEFAULT_ORPHAN_TIMEOUT_MS = 60_000;

export interface GeneratorService {
  url: string;
  close(): Promise<void>;
}

/** One event of the records stream, as the bytes written. */
function sseEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The load-generator process's HTTP side (generator-protocol.ts): answers clock exchanges, runs its slice of the
 * schedule through the same pacer and client as the in-process path (`runLoad`), and streams each record the moment it
 * is final. Records are kept (as their event text) so that a stream opened late, or opened again, misses none.
 */
export async function startGeneratorService(options: GeneratorServiceOptions): Promise<GeneratorService> {
  const clock = options.clock ?? systemClock;
  const recordEvents: string[] = [];
  const streams = new Set<ServerResponse>();
  const abortController = new AbortController();
  let finalEvent: string | undefined;
  let started = false;
  let lastContactMs = clock.nowMs();
  let orphaned = false;

  const broadcast = (text: string): void => {
    for (const stream of streams) stream.write(text);
  };
  const finish = (text: string): void => {
    finalEvent = text;
    for (const stream of streams) stream.end(text);
    streams.clear();
  };

  const runSlice = async (start: GeneratorStart): Promise<void> => {
    try {
      const client = await loadProtocolClient(start.clientSpec.protocol, { ...start.clientSpec.options, clock });
      try {
        const result = await runLoad({
          requests: start.requests,
          warmupRequests: [],
          arrivalOffsetsMs: Float64Array.from(start.arrivalOffsetsMs),
          requestIndices: start.requestIndices,
          ...(start.maxConcurrency === undefined ? {} : { maxConcurrency: start.maxConcurrency }),
          client,
          clock,
          signal: abortController.signal,
          requestIdPrefix: start.requestIdPrefix,
          // The common t0 on this host's clock: the coordinator's instant plus this clock's measured lead over it.
          startAtEpochMs: start.startAtCoordinatorEpochMs + start.clockOffsetMs,
          onProgress: (progress) => broadcast(sseEvent('progress', progress)),
          onRecord: (record: RequestRecord) => {
            const text = sseEvent('record', record);
            recordEvents.push(text);
            broadcast(text);
          },
        });
        const done: GeneratorDone = { records: recordEvents.length, startTime: result.startTime, endTime: result.endTime, interrupted: result.interrupted };
        finish(sseEvent('done', done));
      } finally {
        await client.close().catch(() => undefined);
      }
    } catch (error) {
      const failed: GeneratorFailed = { message: error instanceof Error ? error.message : String(error), ...(isServelabError(error) ? { code: error.code } : {}) };
      finish(sseEvent('failed', failed));
    }
  };

  const handle = async (incoming: IncomingMessage, response: ServerResponse, server: Server): Promise<void> => {
    // Stamped first, before anything else this request costs: the exchange's t2.
    const receivedEpochMs = clock.nowEpochSeconds() * 1000;
    lastContactMs = clock.nowMs();
    const refusal = refuseUntrustedRequest(incoming, { token: options.controlToken, listenHost: options.advertisedHost ?? options.host, port: (server.address() as AddressInfo).port });
    if (refusal !== undefined) return answer(response, refusal.status, { error: refusal.message });
    const url = new URL(incoming.url ?? '/', 'http://generator');
    const method = incoming.method ?? 'GET';
    if (url.pathname === GENERATOR_PATHS.clock && method === 'GET') {
      const anchor = clockAnchorOf(clock);
      const stamps: ClockStamps = { receivedEpochMs, sentEpochMs: clock.nowEpochSeconds() * 1000, ...(anchor === undefined ? {} : { clockAnchor: anchor }) };
      return answer(response, 200, stamps);
    }
    if (url.pathname === GENERATOR_PATHS.start && method === 'POST') {
      if (started) return answer(response, 409, { error: 'this load generator has already been started; start a new one for another run' });
      let start: GeneratorStart;
      try {
        start = JSON.parse((await readBody(incoming, MAX_START_BODY_BYTES)).toString('utf8')) as GeneratorStart;
      } catch (error) {
        const status = error instanceof RequestBodyTooLarge ? 413 : 400;
        return answer(response, status, { error: `the start message could not be read: ${(error as Error).message}` });
      }
      started = true;
      answer(response, 202, { accepted: start.requests.length });
      void runSlice(start);
      return;
    }
    if (url.pathname === GENERATOR_PATHS.records && method === 'GET') {
      const from = Math.max(0, Number(url.searchParams.get('from') ?? 0) || 0);
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      response.flushHeaders();
      for (let index = from; index < recordEvents.length; index++) response.write(recordEvents[index]);
      if (finalEvent !== undefined) {
        response.end(finalEvent);
        return;
      }
      streams.add(response);
      response.once('close', () => {
        streams.delete(response);
        lastContactMs = clock.nowMs();
      });
      return;
    }
    if (url.pathname === GENERATOR_PATHS.abort && method === 'POST') {
      abortController.abort();
      // Never started: there is nothing to run, and the stream must still end.
      if (!started) {
        started = true;
        const done: GeneratorDone = { records: 0, startTime: clock.nowEpochSeconds(), endTime: clock.nowEpochSeconds(), interrupted: true };
        finish(sseEvent('done', done));
      }
      return answer(response, 204, undefined);
    }
    return answer(response, 404, { error: `no such load-generator endpoint: ${method} ${url.pathname}` });
  };

  const server: Server = createServer({ noDelay: true, keepAliveTimeout: 60_000, requestTimeout: 0 }, (incoming, response) => {
    handle(incoming, response, server).catch((error: unknown) => {
      if (!response.headersSent) answer(response, 500, { error: (error as Error).message });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new ServelabError('PORT_IN_USE', `the load generator could not listen on ${options.host}:${options.port}: the port is in use; use port 0`)
          : error,
      ),
    );
    server.listen(options.port ?? 0, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const orphanTimeoutMs = options.orphanTimeoutMs ?? DEFAULT_ORPHAN_TIMEOUT_MS;
  const orphanTimer = setInterval(() => {
    if (orphaned || streams.size > 0 || clock.nowMs() - lastContactMs < orphanTimeoutMs) return;
    orphaned = true;
    abortController.abort();
    options.onOrphaned?.();
  }, options.orphanCheckIntervalMs ?? 1_000);
  orphanTimer.unref();
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close: async () => {
      clearInterval(orphanTimer);
      abortController.abort();
      for (const stream of streams) stream.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function answer(response: ServerResponse, status: number, body: unknown): void {
  if (body === undefined) {
    response.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}
