import { join } from 'node:path';
import { launchBuiltinRouter } from '../cluster/launchers/builtin-router/launch-builtin-router.js';
import { launchSglangRouter } from '../cluster/launchers/sglang-router/launch-sglang-router.js';
import { startNginx } from '../cluster/launchers/nginx/start-nginx.js';
import { httpRouterControl, type RouterControl } from '../cluster/failures/router-control.js';
import { findFreePort } from '../cluster/ports.js';
import type { RoutingTestConfig } from '../config/schema.js';
import type { ServerHandle } from '../types/cluster.js';

export interface LaunchedRouter {
  handle: ServerHandle;
  /** Present when the router can add and remove workers at run time. */
  control?: RouterControl;
}

/** Starts the router the config asks for, in front of `workerUrls` (the taps' URLs when taps are on). */
export async function launchRouter(config: RoutingTestConfig, workerUrls: string[], runDirectory: string): Promise<LaunchedRouter> {
  const logsPath = join(runDirectory, 'logs');
  switch (config.router) {
    case 'builtin': {
      const { handle, controlToken } = await launchBuiltinRouter({
        workerUrls,
        policy: config.routingPolicy,
        port: config.routerPort,
        maxRetries: config.maxRetries,
        seed: config.seed,
        logPath: join(logsPath, 'router.log'),
      });
      return { handle, control: httpRouterControl(handle.url, controlToken) };
    }
    case 'nginx': {
      const method = config.routingPolicy === 'least_conn' || config.routingPolicy === 'shortest_queue' ? 'least_conn' : 'round_robin';
      const nginx = await startNginx({ serverUrls: workerUrls, method, runDirectory: join(runDirectory, 'nginx'), logsDirectory: logsPath, port: config.routerPort === 0 ? await findFreePort() : config.routerPort });
      return { handle: { name: 'nginx', url: nginx.url, stop: () => nginx.close() } };
    }
    case 'sglang-router': {
      const handle = await launchSglangRouter({
        workerUrls,
        policy: config.routingPolicy,
        port: config.routerPort === 0 ? await findFreePort() : config.routerPort,
        prometheusPort: config.routerPrometheusPort ?? (await findFreePort()),
        pythonExecutable: config.pythonExecutable,
        logPath: join(logsPath, 'sglang-router.log'),
      });
      return { handle, control: httpRouterControl(handle.url) };
    }
  }
}
