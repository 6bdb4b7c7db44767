import { attachServer } from '../../cluster/launchers/attach/attach-server.js';
import type { TargetLauncher } from './target-launcher.js';

/**
 * Servers that already run: nothing is launched or stopped. A node test uses `--url`; a routing test uses
 * `--worker-urls` (servelab starts the router), or `--url` alone for a router that already runs in front of them.
 */
export const attachTarget: TargetLauncher = {
  name: 'attach',
  unmodelledColumns: [],
  serversReportOnThemselves: false,
  describeNodeStart: (config) => `attaching to ${config.url}`,
  describeClusterStart: () => 'checking the attached servers',
  // The config check guarantees a URL for attach.
  launchNode: (config) => attachServer(config.url as string),
  launchClusterNode: (config, index) => attachServer((config.workerUrls ?? [])[index] as string, `node-${index}`),
  attachedRouterUrl: (config) => config.url,
};
