import { join } from 'node:path';
import { attachServer } from '../cluster/launchers/attach/attach-server.js';
import { launchSimServer } from '../cluster/launchers/sim/launch-sim-server.js';
import { launchSglangServer } from '../cluster/launchers/sglang/launch-sglang-server.js';
import { assertPortFree } from '../cluster/ports.js';
import type { RoutingTestConfig } from '../config/schema.js';
import type { ServerHandle } from '../types/cluster.js';
import { simEngineSettings, sglangServerSettings } from './server-settings.js';

/**
 * Starts the routing test's N servers (or attaches to `workerUrls`) in parallel, and waits until all are ready. If
 * one fails, the others are stopped before the error is passed on: a failed start leaves nothing running.
 */
export async function launchCluster(config: RoutingTestConfig, logsPath: string): Promise<ServerHandle[]> {
  const indices = Array.from({ length: config.numGpus }, (_, index) => index);
  if (config.target === 'sglang') {
    for (const index of indices) await assertPortFree(config.basePort + index, '--base-port');
  }
  const launches = indices.map((index) => launchOne(config, index, logsPath));
  const settled = await Promise.allSettled(launches);
  const failure = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failure !== undefined) {
    await Promise.all(settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.stop().catch(() => undefined) : undefined)));
    throw failure.reason;
  }
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<ServerHandle>).value);
}

function launchOne(config: RoutingTestConfig, index: number, logsPath: string): Promise<ServerHandle> {
  const name = `node-${index}`;
  switch (config.target) {
    case 'attach':
      return attachServer((config.workerUrls ?? [])[index] as string, name);
    case 'sim':
      return launchSimServer({
        name,
        logPath: join(logsPath, `${name}.log`),
        port: 0,
        ...simEngineSettings(config),
        // Each node gets its own seed so their random streams differ but the run stays reproducible.
        seed: config.seed * 1000 + index,
        readyTimeoutMs: (config.readyTimeoutS ?? 30) * 1000,
      });
    case 'sglang': {
      const firstGpu = (Array.isArray(config.gpuId) ? (config.gpuId[0] ?? 0) : config.gpuId) + index * config.tpSize;
      return launchSglangServer({
        ...sglangServerSettings(config),
        name,
        port: config.basePort + index,
        gpuId: firstGpu,
        logPath: join(logsPath, `${name}.log`),
        requestLogDirectory: join(logsPath, `${name}-request-logs`),
        readyTimeoutMs: (config.readyTimeoutS ?? 600) * 1000,
      });
    }
  }
}
