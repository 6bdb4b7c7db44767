import { setMaxListeners } from 'node:events';
import type { RoutingTestConfig } from '../config/schema.js';
import { ServelabError } from '../errors/servelab-error.js';
import type { ServerHandle } from '../types/cluster.js';
import type { TargetLaunchContext, TargetLauncher } from './launch-targets/target-launcher.js';

/**
 * Starts the routing test's N servers (or attaches to `workerUrls`) in parallel, and waits until all are ready: all
 * or none. The first failed start, or an abort of `context.signal` (Ctrl-C), aborts the launches still pending (a
 * launcher that takes the signal kills what it was starting at once) and stops every server already up, each as soon
 * as it is up; the error is passed on only once nothing is left running. Without this, a Ctrl-C 1 s into starting 24
 * servers waited for all 24 to get ready before stopping any.
 */
export async function launchCluster(launcher: TargetLauncher, config: RoutingTestConfig, context: TargetLaunchContext): Promise<ServerHandle[]> {
  const outer = context.signal;
  // A function, not a narrowed value: the signal can abort across every await below.
  const outerAborted = (): boolean => outer?.aborted === true;
  if (outerAborted()) throw interrupted();
  await launcher.prepareCluster?.(config, context);
  if (outerAborted()) throw interrupted();
  const giveUp = new AbortController();
  const signal = outer === undefined ? giveUp.signal : AbortSignal.any([outer, giveUp.signal]);
  // One listener for each launch and one here: many, by design, not a leak.
  setMaxListeners(config.numGpus + 1, signal);
  let firstFailure: { reason: unknown } | undefined;
  const stops: Promise<void>[] = [];
  const up = new Set<ServerHandle>();
  const stopThoseUp = (): void => {
    for (const server of up) stops.push(server.stop().catch(() => undefined));
    up.clear();
  };
  signal.addEventListener('abort', stopThoseUp, { once: true });
  const indices = Array.from({ length: config.numGpus }, (_, index) => index);
  const launches = indices.map(async (index) => {
    try {
      const server = await launcher.launchClusterNode(config, index, { ...context, signal });
      // Up after the start-up was given up: stopped now, not after the slowest of the others is up too.
      if (signal.aborted) stops.push(server.stop().catch(() => undefined));
      else up.add(server);
      return server;
    } catch (error) {
      // The first failure of its own is the news; the launches it aborted fail with INTERRUPTED, the same news again.
      if (!signal.aborted) {
        firstFailure = { reason: error };
        giveUp.abort();
      }
      throw error;
    }
  });
  const settled = await Promise.allSettled(launches);
  signal.removeEventListener('abort', stopThoseUp);
  if (!signal.aborted) return settled.map((outcome) => (outcome as PromiseFulfilledResult<ServerHandle>).value);
  await Promise.all(stops);
  if (outerAborted()) throw interrupted();
  throw (firstFailure as { reason: unknown }).reason;
}

function interrupted(): ServelabError {
  return new ServelabError('INTERRUPTED', 'interrupted while the servers were starting; nothing was measured');
}
