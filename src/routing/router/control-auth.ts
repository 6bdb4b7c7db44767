import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * Who may change the builtin router: its worker list and the workers' caches. Anyone who can reach its port could
 * otherwise add a worker of their own (and see every prompt), remove workers, or flush caches — including a web page
 * in the user's browser (a cross-site POST, or a DNS-rebound name pointing at 127.0.0.1).
 *
 * The rules for the control endpoints (`/workers`, `/workers/{id}`, `/add_worker`, `/remove_worker`, `/flush_cache`):
 * - a per-run token is required, in `x-servelab-control-token` (or `authorization: Bearer`). servelab makes one for
 *   each router it launches and gives it only to that router (in its environment, never on a command line, in a log
 *   or on the terminal) and to its own failure executor. A router started by hand reads it from
 *   SERVELAB_ROUTER_CONTROL_TOKEN; without it, its control endpoints are closed;
 * - the method must change state (POST, or DELETE for `/workers/{id}`); the listing `GET /workers` needs the token too;
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

/** The control paths that change state (or list the workers) and so need the token. */
export function isGuardedControlPath(pathname: string): boolean {
  return pathname === '/workers' || pathname.startsWith('/workers/') || pathname === '/add_worker' || pathname === '/remove_worker' || pathname === '/flush_cache';
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

/** Undefined when the request may use the guarded endpoint; otherwise the status and reason to answer with. */
export function refuseControlRequest(incoming: IncomingMessage, pathname: string, settings: ControlAuthSettings): ControlRefusal | undefined {
  const method = incoming.method ?? 'GET';
  const allowed = pathname === '/workers' ? ['GET', 'POST'] : pathname.startsWith('/workers/') ? ['DELETE'] : ['POST'];
  if (!allowed.includes(method)) return { status: 405, message: `${pathname} accepts ${allowed.join(' or ')} only` };
  if (incoming.headers.origin !== undefined) {
    return { status: 403, message: 'control requests from a browser page (with an Origin header) are refused' };
  }
  if (!hostNamesThisRouter(incoming.headers.host, settings)) {
    return { status: 403, message: 'the Host header does not name this router; use its address (localhost or an IP) and port' };
  }
  if (settings.token === undefined) {
    return { status: 403, message: `this router's control endpoints are closed: start it with ${CONTROL_TOKEN_ENV} set, and send that token in ${CONTROL_TOKEN_HEADER}` };
  }
  if (!tokenMatches(presentedToken(incoming), settings.token)) {
    return { status: 401, message: `a valid control token is required in ${CONTROL_TOKEN_HEADER}` };
  }
  return undefined;
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
