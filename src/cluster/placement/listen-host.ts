import type { ProcessPlacement } from '../../types/cluster.js';

/** The address servelab's own processes listen on when none is given (their `--host` default). */
const DEFAULT_LISTEN_HOST = '127.0.0.1';

/**
 * The `--host` arguments for one of servelab's own processes (sim-server, router, taps) on `node`: none locally, where
 * they listen on loopback by default; the node's address elsewhere, so that processes on other nodes reach it.
 */
export function listenHostArgs(placement: ProcessPlacement, node: string | undefined): string[] {
  const host = placement.hostOf(node);
  return host === DEFAULT_LISTEN_HOST ? [] : ['--host', host];
}
