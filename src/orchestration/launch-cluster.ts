import type { RoutingTestConfig } from '../config/schema.js';
import type { ServerHandle } from '../types/cluster.js';
import type { TargetLaunchContext, TargetLauncher } from './launch-targets/target-launcher.js';

/**
 * Starts the routing test's N servers (or attaches to `workerUrls`) in parallel, and waits until all are ready. If
 * one fails, the others are stopped before the error is passed on: a failed start leaves nothing running.
 */
export async function launchCluster(launcher: TargetLauncher, config: RoutingTestConfig, context: TargetLaunchContext): Promise<ServerHandle[]> {
  await launcher.prepareCluster?.(config, context);
  const indices = Array.from({ length: config.numGpus }, (_, index) => index);
  const launches = indices.map((index) => launcher.launchClusterNode(config, index, context));
  const settled = await Promise.allSettled(launches);
  const failure = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failure !== undefined) {
    await Promise.all(settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.stop().catch(() => undefined) : undefined)));
    throw failure.reason;
  }
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<ServerHandle>).value);
}
