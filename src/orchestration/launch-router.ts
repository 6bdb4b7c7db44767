import { join } from 'node:path';
import { launchBuiltinRouter } from '../cluster/launchers/builtin-router/launch-builtin-router.js';
import { launchSglangRouter } from '../cluster/launchers/sglang-router/launch-sglang-router.js';
import { launchSmg } from '../cluster/launchers/smg/launch-smg.js';
import { startNginx } from '../cluster/launchers/nginx/start-nginx.js';
import { httpRouterControl, type RouterControl } from '../cluster/failures/router-control.js';
import { localPlacement } from '../cluster/placement/local/local-placement.js';
import type { RoutingTestConfig } from '../config/schema.js';
import type { ProcessPlacement, ServerHandle } from '../types/cluster.js';
import type { PdRouterArgs } from '../cluster/launchers/smg/smg-args.js';
import { pdServers } from './pd-servers.js';

export interface LaunchedRouter {
  handle: ServerHandle;
  /** Present when the router can add and remove workers at run time. */
  control?: RouterControl;
  /** The router's own Prometheus metrics (servelab_router_*, smg_*, sglang-router's), scraped beside the servers'. */
  metricsUrl?: string;
  /**
   * Present when the router traces its requests itself (the builtin router): the URL whose `/_servelab/tap-records`
   * holds what it recorded, in the taps' format (fetched during the run by trace-collector.ts).
   */
  traceUrl?: string;
}

/** Whether a run's router traces its own requests, so that the run needs no tracing taps in front of the servers. */
export function routerTracesItself(config: RoutingTestConfig): boolean {
  return config.router === 'builtin';
}

/**
 * Starts the router the config asks for, in front of `workerUrls` (the taps' URLs when taps are on). With taps on, the
 * builtin router traces itself instead (`routerTracesItself`). It runs where `placement` puts it (this host by default).
 */
export async function launchRouter(config: RoutingTestConfig, workerUrls: string[], runDirectory: string, placement: ProcessPlacement = localPlacement, serverUrls: readonly string[] = workerUrls): Promise<LaunchedRouter> {
  const logsPath = join(runDirectory, 'logs');
  const pd = routerPdArgs(config, workerUrls, serverUrls);
  switch (config.router) {
    case 'builtin': {
      const { handle, controlToken } = await launchBuiltinRouter({
        workerUrls,
        policy: config.routingPolicy,
        port: config.routerPort,
        maxRetries: config.maxRetries,
        seed: config.seed,
        logPath: join(logsPath, 'router.log'),
        trace: config.taps,
        placement,
        // Prefill/decode disaggregation: the first numPrefill servers prefill (the targets launch them so).
        ...(pd === undefined
          ? {}
          : {
              pd: {
                prefillUrls: pd.prefill.map((server) => `${server.url},${server.bootstrapPort ?? 'none'}`),
                decodeUrls: [...pd.decode],
                prefillPolicy: config.prefillPolicy ?? config.routingPolicy,
                decodePolicy: config.decodePolicy ?? config.routingPolicy,
              },
            }),
      });
      return {
        handle,
        control: httpRouterControl(handle.url, controlToken),
        metricsUrl: `${handle.url}/metrics`,
        ...(config.taps ? { traceUrl: handle.url } : {}),
      };
    }
    case 'nginx': {
      const method = config.routingPolicy === 'least_conn' || config.routingPolicy === 'shortest_queue' ? 'least_conn' : 'round_robin';
      const nginx = await startNginx({ serverUrls: workerUrls, method, runDirectory: join(runDirectory, 'nginx'), logsDirectory: logsPath, port: config.routerPort === 0 ? await placement.freePort() : config.routerPort, placement });
      return { handle: { name: 'nginx', url: nginx.url, pid: nginx.pid, exited: nginx.exited, stop: () => nginx.close() } };
    }
    case 'smg': {
      const prometheusPort = config.routerPrometheusPort ?? (await placement.freePort());
      const handle = await launchSmg({
        workerUrls,
        policy: config.routingPolicy,
        port: config.routerPort === 0 ? await placement.freePort() : config.routerPort,
        prometheusPort,
        pythonExecutable: config.pythonExecutable,
        logPath: join(logsPath, 'smg.log'),
        placement,
        ...(pd === undefined ? {} : { pd }),
      });
      // smg's worker API (GET/POST /workers, DELETE /workers/{id}) is the one httpRouterControl speaks.
      return { handle, control: httpRouterControl(handle.url), metricsUrl: `http://${placement.hostOf()}:${prometheusPort}/metrics` };
    }
    case 'sglang-router': {
      const prometheusPort = config.routerPrometheusPort ?? (await placement.freePort());
      const handle = await launchSglangRouter({
        workerUrls,
        policy: config.routingPolicy,
        port: config.routerPort === 0 ? await placement.freePort() : config.routerPort,
        prometheusPort,
        pythonExecutable: config.pythonExecutable,
        logPath: join(logsPath, 'sglang-router.log'),
        placement,
        ...(pd === undefined ? {} : { pd }),
      });
      return { handle, control: httpRouterControl(handle.url), metricsUrl: `http://${placement.hostOf()}:${prometheusPort}/metrics` };
    }
  }
}

/** A PD run's servers and side policies as its router takes them; undefined for a co-located run. */
function routerPdArgs(config: RoutingTestConfig, workerUrls: readonly string[], serverUrls: readonly string[]): PdRouterArgs | undefined {
  if (config.pdDisaggregation !== true) return undefined;
  const servers = pdServers(config, workerUrls, serverUrls);
  return {
    ...servers,
    ...(config.prefillPolicy === undefined ? {} : { prefillPolicy: config.prefillPolicy }),
    ...(config.decodePolicy === undefined ? {} : { decodePolicy: config.decodePolicy }),
  };
}
