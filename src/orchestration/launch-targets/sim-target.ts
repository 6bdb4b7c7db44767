import { join } from 'node:path';
import { launchSimServer } from '../../cluster/launchers/sim/launch-sim-server.js';
import { checkSimSettings } from '../check-sim-settings.js';
import { simEngineSettings } from '../server-settings.js';
import { readyTimeoutMs, type TargetLauncher } from './target-launcher.js';

/** A simulated server starts in about a second; 30 s is ample even on a loaded machine. */
const DEFAULT_READY_TIMEOUT_S = 30;

/** servelab's simulated SGLang engine, one `servelab sim-server` process per server, each on a port it picks. */
export const simTarget: TargetLauncher = {
  name: 'sim',
  unmodelledColumns: ['tokenize_time'],
  serversReportOnThemselves: true,
  check: (config) => checkSimSettings(config),
  describeNodeStart: () => 'launching the sim server',
  describeClusterStart: (config) => `launching ${config.numGpus} sim servers`,
  async launchNode(config, { placement, logsPath, serverNode, signal }) {
    const { node } = serverNode(0);
    // Port 0 (or none) lets the server pick its own, with no race; a given port is checked first for a clear error.
    if (config.port !== undefined && config.port !== 0) await placement.assertPortFree(config.port, '--port', node);
    return launchSimServer({
      name: 'sim-server',
      logPath: join(logsPath, 'sim-server.log'),
      port: config.port,
      ...simEngineSettings(config),
      seed: config.seed,
      readyTimeoutMs: readyTimeoutMs(config, DEFAULT_READY_TIMEOUT_S),
      placement,
      ...(node === undefined ? {} : { node }),
      ...(signal === undefined ? {} : { signal }),
    });
  },
  launchClusterNode(config, index, { placement, logsPath, serverNode, signal }) {
    const name = `node-${index}`;
    const { node } = serverNode(index);
    return launchSimServer({
      name,
      logPath: join(logsPath, `${name}.log`),
      port: 0,
      ...simEngineSettings(config),
      // Prefill/decode disaggregation: the first numPrefill nodes prefill, the rest decode.
      ...(config.pdDisaggregation === true ? { role: index < (config.numPrefill ?? 1) ? ('prefill' as const) : ('decode' as const) } : {}),
      ...(config.kvTransferBandwidth === undefined ? {} : { kvTransferBandwidth: config.kvTransferBandwidth }),
      ...(config.kvTransferLatencyMs === undefined ? {} : { kvTransferLatencyMs: config.kvTransferLatencyMs }),
      // Each node gets its own seed so their random streams differ but the run stays reproducible.
      seed: config.seed * 1000 + index,
      readyTimeoutMs: readyTimeoutMs(config, DEFAULT_READY_TIMEOUT_S),
      placement,
      ...(node === undefined ? {} : { node }),
      ...(signal === undefined ? {} : { signal }),
    });
  },
};
