import { attachServer } from '../../cluster/launchers/attach/attach-server.js';
import { parsePrefillUrl } from '../../config/routing-test-config.js';
import type { RoutingTestConfig } from '../../config/schema.js';
import type { TargetLauncher } from './target-launcher.js';

/**
 * Servers that already run: nothing is launched or stopped. A node test uses `--url`; a routing test uses
 * `--worker-urls` (servelab starts the router), or `--url` alone for a router that already runs in front of them; a PD
 * routing test `--prefill-url` and `--decode-url` (servelab starts the router in PD mode).
 */
export const attachTarget: TargetLauncher = {
  name: 'attach',
  unmodelledColumns: [],
  serversReportOnThemselves: false,
  describeNodeStart: (config) => `attaching to ${config.url}`,
  describeClusterStart: (config) => (config.pdDisaggregation === true ? `checking the ${config.numPrefill} prefill and ${config.numDecode} decode servers` : 'checking the attached servers'),
  // The config check guarantees a URL for attach.
  launchNode: (config) => attachServer(config.url as string),
  launchClusterNode: (config, index) => attachServer(attachedServerUrl(config, index), `node-${index}`),
  attachedRouterUrl: (config) => config.url,
};

/** Server `index`'s URL: in PD the prefill servers first, then the decode servers (the order the router is told them). */
function attachedServerUrl(config: RoutingTestConfig, index: number): string {
  if (config.pdDisaggregation !== true) return (config.workerUrls ?? [])[index] as string;
  const prefill = config.prefillUrls ?? [];
  if (index < prefill.length) return parsePrefillUrl(prefill[index] as string).url;
  return (config.decodeUrls ?? [])[index - prefill.length] as string;
}
