import type { PlacedProcess, ServerHandle } from '../../types/cluster.js';

/**
 * The handle of a server servelab launched as `child`, now serving at `url`: its process (pid, log, exit) and the way
 * to stop or signal its group. `node` when the run placed it on a named node. The launcher adds what is its own
 * (a request log directory, a relaunch).
 */
export function launchedHandle(name: string, url: string, child: PlacedProcess, node: string | undefined): ServerHandle {
  return {
    name,
    url,
    pid: child.pid,
    ...(node === undefined ? {} : { node }),
    logPath: child.logPath,
    exited: child.exited,
    stop: () => child.stop(),
    signal: (signal) => child.signal(signal),
  };
}
