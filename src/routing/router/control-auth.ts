import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * Who may change the builtin router: its worker list and the workers' caches. Anyone who can reach its port could
 * otherwise add a worker of their own (and see every prompt), remove workers, or flush caches — including a web page
 * in the user's browser (a cross-site POST, or a DNS-rebound name pointing at 127.0.0.1).
 *
 * The rules for the control endpoints (`/workers`, `/workers/{id}`, `/add_worker`, `/remove_worker`, `/flush_cache`),
 * for every `/_servelab/` endpoint, and for the workers' admin endpoints the router would otherwise proxy (all matched
 * after decoding and normalising the path: control-paths.ts):
 * - a per-run token is required, in `x-servelab-control-token` (or `authorization: Bearer`). servelab makes one for
 *   each router it launches and gives it only to that router (in its environment, never on a command line, in a log
 *   or on the terminal) and to its own failure executor. A router started by hand reads it from
 *   SERVELAB_ROUTER_CONTROL_TOKEN; without it, its control endpoints are closed;
 * - the router's own endpoints take only methods that change state (POST, or DELETE for `/workers/{id}`); the
 *   listing `GET /workers` needs the token too;
 * - a request carrying an `Origin` header comes from a browser page: refused;
 * - the `Host` header must name this router: `localhost`, an IP literal or the host it listens on, with its port
 *   (a DNS-rebinding page sends its own domain name).
 * `/health`, `/readiness` and `/metrics` stay open (read-only, used by probes and Prometheus).
 */
export const CONTROL_TOKEN_ENV = 'SERVELAB_ROUTER_CONTROL_TOKEN';
export const CONTROL_TOKEN_HEADER = 'x-servelab-control-token';

/** A fresh token: 32 random bytes, hex. */
export function newControlToken(): string {
  return randomBytes(32).toString('hex');
}

/**
 * This process's token for the endpoints servelab guards (control-paths.ts): the one in CONTROL_TOKEN_ENV when set (a
 * process servelab launched inherits it through childEnv), else one made once for this process. servelab hands it
 * to every child it launches and sends it to them, so a run's processes trust each other and nothing else; a server
 * or taps process started by hand without the variable makes its own, which nobody knows: its `/_servelab/`
 * endpoints are closed.
 */
export function runControlToken(): string {
  const inherited = process.env[CONTROL_TOKEN_ENV];
  if (inherited !== undefined && inherited !== '') return inherited;
  processToken ??= newControlToken();
  return processToken;
}
let processToken: string | undefined;

/** The header that carries `token`, for a request to a guarded endpoint. */
export function controlTokenHeaders(token: string = runControlToken()): Record<string, string> {
  return { [CONTROL_TOKEN_HEADER]: token };
}

export interface ControlAuthSettings {
  /** The token; undefined closes the guarded endpoints. */
  token: string | undefined;
  /** The host the router listens on, and its port. */
  listenHost: string;
  port: number;
}

export interface ControlRefusal {
  status: number;
  message: string;
}

/**
 * Undefined when the request may use the builtin router's own control endpoint at `normalizedPath` (one of
 * control-paths.ts' 'router-control' paths, normalised); otherwise the status and reason to answer with.
 */
export function refuseControlRequest(incoming: IncomingMessage, normalizedPath: string, settings: ControlAuthSettings): ControlRefusal | undefined {
  const method = incoming.method ?? 'GET';
  const allowed = normalizedPath === '/workers' ? ['GET', 'POST'] : normalizedPath.startsWith('/workers/') ? ['DELETE'] : ['POST'];
  if (!allowed.includes(method)) return { status: 405, message: `${normalizedPath} accepts ${allowed.join(' or ')} only` };
  return refuseUntrustedRequest(incoming, settings);
}

/**
 * Undefined when the request may reach a guarded endpoint of any kind (servelab's own, a worker's admin endpoint
 * through the router): no browser Origin, a Host naming this listener, the token.
 */
export function refuseUntrustedRequest(incoming: IncomingMessage, settings: ControlAuthSettings): ControlRefusal | undefined {
  const browser = refuseBrowserOrigin(incoming);
  if (browser !== undefined) return browser;
  if (!hostNamesThisRouter(incoming.headers.host, settings)) {
    return { status: 403, message: 'the Host header does not name this listener; use its address (localhost or an IP) and port' };
  }
  if (settings.token === undefined) {
    return { status: 403, message: `these control endpoints are closed: start the process with ${CONTROL_TOKEN_ENV} set, and send that token in ${CONTROL_TOKEN_HEADER}` };
  }
  if (!tokenMatches(presentedToken(incoming), settings.token)) {
    return { status: 401, message: `a valid control token is required in ${CONTROL_TOKEN_HEADER}` };
  }
  return undefined;
}

/**
 * A request carrying an `Origin` header comes from a browser page (a cross-site POST with a simple content type needs
 * no preflight): refused on every control endpoint. servelab's own clients, probes and routers send none.
 */
export function refuseBrowserOrigin(incoming: IncomingMessage): ControlRefusal | undefined {
  if (incoming.headers.origin === undefined) return undefined;
  return { status: 403, message: 'control requests from a browser page (with an Origin header) are refused' };
}

function presentedToken(incoming: IncomingMessage): string | undefined {
  const header = incoming.headers[CONTROL_TOKEN_HEADER];
  if (typeof header === 'string') return header;
  const authorization = incoming.headers.authorization;
  return authorization?.startsWith('Bearer ') === true ? authorization.slice('Bearer '.length) : undefined;
}

function tokenMatches(presented: string | undefined, token: string): boolean {
  if (presented === undefined) return false;
  const given = Buffer.from(presented);
  const expected = Buffer.from(token);
  // timingSafeEqual needs equal lengths; the length itself is no secret (every token has the same).
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function hostNamesThisRouter(hostHeader: string | undefined, settings: ControlAuthSettings): boolean {
  if (hostHeader === undefined) return false;
  let url: URL;
  try {
    url = new URL(`http://${hostHeader}`);
  } catch {
    return false;
  }
  if (url.port !== String(settings.port) && !(url.port === '' && settings.port === 80)) return false;
  const name = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || isIP(name) !== 0 || name === settings.listenHost.replace(/^\[|\]$/g, '').toLowerCase();
}
