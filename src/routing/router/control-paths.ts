/**
 * Which request paths are control paths, decided on the path as a server will finally see it. The builtin router, the
 * tracing taps and the simulated server all ask `controlPathKind` here, so no one of them can be reached by spelling a
 * path in a way another one does not recognise.
 *
 * Why normalise: a proxy that compares the raw path with `/flush_cache` lets `/flush%5Fcache`, `/%66lush_cache`,
 * `//flush_cache` or `/v1/../flush_cache` through, and the worker behind it (uvicorn decodes percent-encoding before
 * FastAPI matches a route) runs its flush all the same. So the path is percent-decoded until it stops changing (a
 * double-encoded `%255F` is caught too: over-matching only asks for a token that a harmless path did not need), `\`
 * is read as `/`, empty and `.` segments are dropped, `..` removes the segment before it, a trailing `/` goes, and
 * the comparison ignores case.
 */

/** What a path is, for the guards. */
export type ControlPathKind =
  /** servelab's own endpoints (`/_servelab/...`: harness figures, tap records): always need the run's token. */
  | 'servelab'
  /** The builtin router's own worker-list and cache endpoints (start-router.ts). */
  | 'router-control'
  /** An endpoint of SGLang's server (or of a router in front of it) that changes the server's state. */
  | 'worker-admin'
  /** Anything else: inference, health, metrics, model info. */
  | 'open';

/** The prefix of servelab's own endpoints. */
export const SERVELAB_PATH_PREFIX = '/_servelab/';

/** The builtin router's control paths (besides `/workers/{id}`), as start-router.ts serves them. */
const ROUTER_CONTROL_PATHS = new Set(['/workers', '/add_worker', '/remove_worker', '/flush_cache']);

/**
 * SGLang's state-changing endpoints, from sglang's python/sglang/srt/entrypoints/http_server.py (the FastAPI routes
 * that flush caches, profile, load or swap weights and adapters, free or take GPU memory, pause, slow down or abort
 * work, change logging or internal state), and those of the routers in front of it (sglang's
 * sgl-router/src/server.rs, which smg grew from: the admin routes add_worker, remove_worker, list_workers,
 * flush_cache, and /workers, /workers/{url}). `/workers` and anything starting with
 * `/update_weight`, `/init_weights_` or `/workers/` are matched by prefix below, so a new weight endpoint is covered.
 */
const WORKER_ADMIN_PATHS = new Set([
  '/flush_cache',
  '/clear_hicache_storage_backend',
  '/start_profile',
  '/stop_profile',
  '/freeze_gc',
  '/start_expert_distribution_record',
  '/stop_expert_distribution_record',
  '/dump_expert_distribution_record',
  '/send_weights_to_remote_instance',
  '/destroy_weights_update_group',
  '/get_weights_by_name',
  '/release_memory_occupation',
  '/resume_memory_occupation',
  '/slow_down',
  '/load_lora_adapter',
  '/unload_lora_adapter',
  '/configure_logging',
  '/abort_request',
  '/pause_generation',
  '/continue_generation',
  '/set_internal_state',
  '/add_worker',
  '/remove_worker',
  '/list_workers',
  '/workers',
]);
const WORKER_ADMIN_PREFIXES = ['/update_weight', '/init_weights_', '/workers/'];

/** Lower-case letters, digits, `_` and `-` in non-empty segments: nothing to decode or resolve. */
const PLAIN_PATH = /^(?:\/[a-z0-9_-]+)+$/;

/** How many rounds of percent-decoding at most: more layers than any server undoes. */
const MAX_DECODE_ROUNDS = 4;

/** Decodes every valid `%XX`, leaving a malformed `%` as it is (never throws: a hostile path must not crash a guard). */
function percentDecodeOnce(path: string): string {
  if (!path.includes('%')) return path;
  const bytes: number[] = [];
  for (let index = 0; index < path.length; index++) {
    const char = path[index] as string;
    if (char === '%' && /^[0-9a-fA-F]{2}$/.test(path.slice(index + 1, index + 3))) {
      bytes.push(Number.parseInt(path.slice(index + 1, index + 3), 16));
      index += 2;
    } else {
      for (const byte of Buffer.from(char, 'utf8')) bytes.push(byte);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * The path part of a request target (`/a/b?x=1`), decoded and normalised as described above, lower case; always
 * starts with `/`.
 */
export function normalizeRequestPath(target: string): string {
  const end = target.search(/[?#]/);
  let path = end < 0 ? target : target.slice(0, end);
  // The common case, every inference request: already plain (this runs on the router's hot path).
  if (PLAIN_PATH.test(path)) return path;
  for (let round = 0; round < MAX_DECODE_ROUNDS; round++) {
    const decoded = percentDecodeOnce(path);
    if (decoded === path) break;
    path = decoded;
  }
  // An absolute-form target (`http://host/flush_cache`) names the path after the authority.
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(path);
  if (absolute !== null) path = path.slice(absolute[0].length);
  const segments: string[] = [];
  for (const segment of path.replace(/\\/g, '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`.toLowerCase();
}

/** What the request target is, for the guards (see ControlPathKind). */
export function controlPathKind(target: string): ControlPathKind {
  const path = normalizeRequestPath(target);
  if (path === SERVELAB_PATH_PREFIX.slice(0, -1) || path.startsWith(SERVELAB_PATH_PREFIX)) return 'servelab';
  if (ROUTER_CONTROL_PATHS.has(path) || path.startsWith('/workers/')) return 'router-control';
  if (WORKER_ADMIN_PATHS.has(path) || WORKER_ADMIN_PREFIXES.some((prefix) => path.startsWith(prefix))) return 'worker-admin';
  return 'open';
}
