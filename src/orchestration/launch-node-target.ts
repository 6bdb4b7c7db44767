import { join } from 'node:path';
import { launchSimServer } from '../cluster/launchers/sim/launch-sim-server.js';
import { launchSglangServer } from '../cluster/launchers/sglang/launch-sglang-server.js';
import { attachServer } from '../cluster/launchers/attach/attach-server.js';
import { assertPortFree } from '../cluster/ports.js';
import type { NodeTestConfig } from '../config/schema.js';
import type { ServerHandle } from '../types/cluster.js';
import { simEngineSettings, sglangServerSettings } from './server-settings.js';

/** Starts (or attaches to) the one server of a node test, as its `target` says. */
export async function launchNodeTarget(config: NodeTestConfig, logsPath: string): Promise<ServerHandle> {
  switch (config.target) {
    case 'attach':
      // The config check guarantees a URL for attach.
      return attachServer(config.url as string);
    case 'sim':
      if (config.port !== undefined && config.port !== 0) await assertPortFree(config.port, '--port');
      return launchSimServer({
        name: 'sim-server',
        logPath: join(logsPath, 'sim-server.log'),
        port: config.port,
        ...simEngineSettings(config),
        seed: config.seed,
        readyTimeoutMs: (config.readyTimeoutS ?? 30) * 1000,
      });
    case 'sglang': {
      const port = config.port ?? 30000;
      await assertPortFree(port, '--port');
      return launchSglangServer({
        ...sglangServerSettings(config),
        name: 'sglang',
        port,
        gpuId: config.gpuId,
        logPath: join(logsPath, 'sglang.log'),
        requestLogDirectory: join(logsPath, 'sglang-request-logs'),
        readyTimeoutMs: (config.readyTimeoutS ?? 600) * 1000,
      });
    }
  }
}
