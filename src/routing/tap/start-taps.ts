import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import type { Clock } from '../../clock/clock.js';
import { ServelabError } from '../../errors/servelab-error.js';
import type { TapOverhead, TapRecord } from '../../types/routing.js';
import { forward, UPSTREAM_AGENT_OPTIONS } from '../proxy/forward.js';
import { forwardedRequestHeaders, rawHeaderValue } from '../proxy/hop-by-hop.js';
import { DEFAULT_MAX_REQUEST_BODY_BYTES, readBody, RequestBodyTooLarge, refuseLargeBody } from '../proxy/read-body.js';
import { requestIdFromBody } from '../routing-key.js';
import { refuseBrowserOrigin, refuseUntrustedRequest, runControlToken, type ControlRefusal } from '../router/control-auth.js';
import { controlPathKind, normalizeRequestPath } from '../router/control-paths.js';
import { summarizeDurations } from './duration-summary.js';
import { serveTapRecords } from './serve-tap-records.js';


/** `"bootstrap_room": 123...` in a JSON body, its digits exactly as written. */
const BOOTSTRAP_ROOM_IN_BODY = /"bootstrap_room"\s*:\s*(\d+)/;
/** Served on the first tap's port (never forwarded): GET the records, DELETE to clear them. */
export const TAP_RECORDS_PATH = '/_servelab/tap-records';

export interface TapsOptions {
  /** The servers to front, one tap each, in node order. */
  upstreamUrls: readonly string[];
  /** Address the taps listen on (127.0.0.1). */
  host?: string;
  /** The tap process's clock: `routerSendTime` is its epoch reading when a request arrives. */
  clock: Clock;
  /** The token `/_servelab/` requests must carry (control-auth.ts); default: this process's runControlToken(). */
  controlToken?: string;
  /** The largest request body a tap reads (default 64 MiB); a larger one is answered 413 and never read further. */
  maxRequestBodyBytes?: number;
}

export interface TapsHandle {
  /** One URL per upstream, same order: give these to the router instead of the servers' URLs. */
  tapUrls: string[];
  records(): TapRecord[];
  overhead(): TapOverhead;
  clearRecords(): void;
  close(): Promise<void>;
}

/** What `GET /_servelab/tap-records` answers. */
export interface TapRecordsResponse {
  /** Records from `offset` on. */
  records: TapRecord[];
  /** How many records the taps hold in all. */
  total: number;
  /** The taps' own cost; absent where the router traces itself (there is no extra hop to measure). */
  overhead?: TapOverhead;
}

/**
 * Starts one transparent streaming proxy per upstream, all in this process. Each request that carries a request id
 * (`x-request-id`, or `rid` in a JSON body) gets a record of when it reached the tap and which server the tap fronts.
 * Requests without an id (health checks, metric scrapes) pass through unrecorded.
 *
 * A tap hides nothing about failures: when its upstream refuses or drops the connection before answering, the tap
 * drops the router's connection too, so a router retries exactly as it would without the tap in between.
 */
export async function startTaps(options: TapsOptions): Promise<TapsHandle> {
  const { clock } = options;
  const controlToken = options.controlToken ?? runControlToken();
  const host = options.host ?? '127.0.0.1';
  if (options.upstreamUrls.length === 0) {
    throw new ServelabError('INVALID_CONFIG', 'the taps need at least one upstream server URL');
  }
  const upstreams = options.upstreamUrls.map((url) => {
    try {
      return new URL(url).origin;
    } catch {
      throw new ServelabError('INVALID_CONFIG', `bad upstream URL "${url}" for a tap: give http://host:port`);
    }
  });
  const dispatcher = new Agent(UPSTREAM_AGENT_OPTIONS);
  let records: TapRecord[] = [];
  let inboundMs: number[] = [];
  let relayMs: number[] = [];
  const overhead = (): TapOverhead => ({ inboundMs: summarizeDurations(inboundMs), relayMs: summarizeDurations(relayMs) });

  const serveRecords = (incoming: IncomingMessage, response: ServerResponse): void =>
    serveTapRecords(incoming, response, records, () => {
      records = [];
      inboundMs = [];
      relayMs = [];
    }, overhead);

  const handle = async (hostIndex: number, incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
    const arrivedMs = clock.nowMs();
    const method = incoming.method ?? 'GET';
    let body: Buffer | null = null;
    if (method !== 'GET' && method !== 'HEAD') {
      try {
        body = await readBody(incoming, options.maxRequestBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_BYTES);
      } catch (error) {
        if (!(error instanceof RequestBodyTooLarge)) throw error;
        refuseLargeBody(response, error, 'servelab tap');
        return;
      }
    }
    let requestId = rawHeaderValue(incoming.rawHeaders, 'x-request-id');
    if (requestId === undefined && body !== null && body.includes('"rid"')) {
      try {
        requestId = requestIdFromBody(JSON.parse(body.toString('utf8')));
      } catch {
        // Not JSON: no id.
      }
    }
    const origin = upstreams[hostIndex] as string;
    let record: TapRecord | undefined;
    if (requestId !== undefined) {
      record = { requestId, routerSendTime: clock.toEpochSeconds(arrivedMs), host: origin, hostIndex };
      // A PD router (smg) injected the room into the body: read from the text, since a double cannot hold every 63-bit room.
      const room = body !== null && body.includes('"bootstrap_room"') ? BOOTSTRAP_ROOM_IN_BODY.exec(body.toString('utf8'))?.[1] : undefined;
      if (room !== undefined) record.bootstrapRoom = room;
      records.push(record);
    }
    let relayedMs = 0;
    const headers = forwardedRequestHeaders(incoming.rawHeaders);
    if (record !== undefined) inboundMs.push(clock.nowMs() - arrivedMs);
    const outcome = await forward({
      dispatcher,
      origin,
      method,
      path: incoming.url ?? '/',
      headers,
      body,
      response,
      onResponseStart: (status) => {
        if (record !== undefined) record.httpStatus = status;
      },
      nowMs: () => clock.nowMs(),
      onRelayed: (startedMs) => {
        relayedMs += clock.nowMs() - startedMs;
      },
    });
    if (record !== undefined && outcome.answered) relayMs.push(relayedMs);
    // Transparent failure: the router must see a dead connection, as it would without the tap.
    if (!outcome.answered && !outcome.clientClosed) incoming.socket.destroy();
  };

  const servers: Server[] = [];
  const tapUrls: string[] = [];
  try {
    for (let index = 0; index < upstreams.length; index++) {
      const hostIndex = index;
      const server: Server = createServer({ noDelay: true, keepAliveTimeout: 30_000, requestTimeout: 0 }, (incoming, response) => {
        const target = incoming.url ?? '/';
        const kind = controlPathKind(target);
        if (kind !== 'open') {
          // servelab's endpoints need the run's token; a server's admin endpoints are passed on (the router in front
          // may flush its workers' caches) but never for a browser page.
          const refusal =
            kind === 'servelab'
              ? refuseUntrustedRequest(incoming, { token: controlToken, listenHost: host, port: (server.address() as AddressInfo).port })
              : refuseBrowserOrigin(incoming);
          if (refusal !== undefined) {
            refuse(response, refusal);
            return;
          }
          if (hostIndex === 0 && kind === 'servelab' && normalizeRequestPath(target) === TAP_RECORDS_PATH) {
            serveRecords(incoming, response);
            return;
          }
        }
        handle(hostIndex, incoming, response).catch(() => incoming.socket.destroy());
      });
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, host, () => resolve());
      });
      tapUrls.push(`http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`);
    }
  } catch (error) {
    for (const server of servers) server.close();
    await dispatcher.destroy();
    throw new ServelabError('UNREACHABLE', `could not start the tracing taps on ${host}: ${(error as Error).message}`, { cause: error });
  }

  let closing: Promise<void> | undefined;
  return {
    tapUrls,
    records: () => records.slice(),
    overhead,
    clearRecords: () => {
      records = [];
      inboundMs = [];
      relayMs = [];
    },
    close: () => {
      closing ??= (async () => {
        await Promise.all(
          servers.map(
            (server) =>
              new Promise<void>((resolve) => {
                server.close(() => resolve());
                server.closeAllConnections();
              }),
          ),
        );
        await dispatcher.destroy();
      })();
      return closing;
    },
  };
}

function refuse(response: ServerResponse, refusal: ControlRefusal): void {
  const text = JSON.stringify({ error: { message: refusal.message } });
  response.writeHead(refusal.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
