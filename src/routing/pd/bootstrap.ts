import { randomBytes } from 'node:crypto';
import { ServelabError } from '../../errors/servelab-error.js';

/** 2^63 - 1: a room is a non-negative signed 64-bit integer. */
const ROOM_MASK = (1n << 63n) - 1n;

/**
 * A new bootstrap room: a uniformly random integer in [0, 2^63 - 1], as smg draws it (a random u64 with the top bit
 * cleared, `generate_room_id` in model_gateway/src/routers/http/pd_types.rs, matching SGLang's mini load balancer's
 * `random.randint(0, 2**63 - 1)`). A bigint: a double cannot hold every such integer, and both servers must see the
 * same one. `random8` supplies 8 random bytes (injected by tests).
 */
export function newBootstrapRoom(random8: () => Uint8Array = () => randomBytes(8)): bigint {
  const bytes = random8();
  if (bytes.length !== 8) throw new ServelabError('INVALID_CONFIG', `a bootstrap room needs 8 random bytes, got ${bytes.length}`);
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value & ROOM_MASK;
}

/** Where a decode server fetches a request's KV from: the prefill server's host and its bootstrap port (null: none). */
export interface BootstrapTarget {
  host: string;
  /** SGLang's `--disaggregation-bootstrap-port` of the prefill server (default 8998), or null for `none`. */
  port: number | null;
}

/**
 * The body of both legs of a PD request: the client's JSON object with `bootstrap_host`, `bootstrap_port` and
 * `bootstrap_room` set (replacing any the client sent), as smg's `inject_bootstrap_into_value` does
 * (model_gateway/src/routers/http/pd_router.rs). The room is written as an exact JSON integer, never through a double.
 * Batched bodies (one room per prompt in smg) are not supported: the message says so.
 */
export function injectBootstrap(bodyText: string, target: BootstrapTarget, room: bigint): string {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    throw new ServelabError('INVALID_CONFIG', 'a PD request body must be JSON: the router injects the bootstrap fields into it');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ServelabError('INVALID_CONFIG', 'a PD request body must be a JSON object: the router injects the bootstrap fields into it');
  }
  const fields = { ...(body as Record<string, unknown>), bootstrap_host: target.host, bootstrap_port: target.port };
  delete (fields as Record<string, unknown>)['bootstrap_room'];
  const text = JSON.stringify(fields);
  // `fields` has at least the two keys above, so the object text ends with `}` after a value: append the room there.
  return `${text.slice(0, -1)},"bootstrap_room":${room.toString()}}`;
}
