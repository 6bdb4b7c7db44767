import { join } from 'node:path';
import { launchSglangAcrossNodes } from '../../cluster/launchers/sglang/launch-sglang-across-nodes.js';
import { launchSglangServer, type SglangLaunchSettings } from '../../cluster/launchers/sglang/launch-sglang-server.js';
import type { SglangDisaggregation } from '../../cluster/launchers/sglang/sglang-server-args.js';
import type { RoutingTestConfig } from '../../config/schema.js';
import type { ServerHandle } from '../../types/cluster.js';
import { isPrefillIndex, prefillBootstrapPort } from '../pd-servers.js';
import { sglangServerSettings } from '../server-settings.js';
import { readyTimeoutMs, type TargetLauncher } from './target-launcher.js';

/** Loading a model's weights (and compiling, with --enable-torch-compile) can take minutes. */
const DEFAULT_READY_TIMEOUT_S = 600;

/** SGLang's own default port, which a node test's server keeps unless `--port` says otherwise. */
const SGLANG_DEFAULT_PORT = 30000;

/**
 * Real SGLang servers (`python -m sglang.launch_server`), each pinned to its GPUs, each writing its request log
 * (`--export-metrics-to-file-dir`) into the run's logs. SGLang takes its port as a flag and does not print one it
 * picked, so ports are given and checked free before anything starts.
 */
export const sglangTarget: TargetLauncher = {
  name: 'sglang',
  unmodelledColumns: [],
  serversReportOnThemselves: false,
  describeNodeStart: () => 'launching the sglang server',
  describeClusterStart: (config) => (config.pdDisaggregation === true ? `launching ${config.numPrefill} prefill and ${config.numDecode} decode sglang servers` : `launching ${config.numGpus} sglang servers`),
  async launchNode(config, { placement, logsPath, serverNode, serverNodeGroup, signal }) {
    const { node } = serverNode(0);
    const port = config.port ?? SGLANG_DEFAULT_PORT;
    await placement.assertPortFree(port, '--port', node);
    return launchOnNodes(serverNodeGroup?.(0), {
      ...sglangServerSettings(config),
      name: 'sglang',
      port,
      gpuId: config.gpuId,
      logPath: join(logsPath, 'sglang.log'),
      requestLogDirectory: join(logsPath, 'sglang-request-logs'),
      readyTimeoutMs: readyTimeoutMs(config, DEFAULT_READY_TIMEOUT_S),
      placement,
      ...(node === undefined ? {} : { node }),
      ...(signal === undefined ? {} : { signal }),
    });
  },
  async prepareCluster(config, { placement, serverNode }) {
    // Every port before any server starts: a taken port then costs no model load.
    for (let index = 0; index < config.numGpus; index += 1) await placement.assertPortFree(config.basePort + index, '--base-port', serverNode(index).node);
    if (config.pdDisaggregation === true) {
      for (let index = 0; index < (config.numPrefill ?? 1); index += 1) {
        await placement.assertPortFree(prefillBootstrapPort(config, index) as number, '--disaggregation-bootstrap-port', serverNode(index).node);
      }
    }
  },
  launchClusterNode(config, index, { placement, logsPath, serverNode, serverNodeGroup, signal }) {
    const name = `node-${index}`;
    const { node, indexOnNode } = serverNode(index);
    // GPUs are numbered per node: the servers that share a node take consecutive groups of tpSize.
    const firstGpu = (Array.isArray(config.gpuId) ? (config.gpuId[0] ?? 0) : config.gpuId) + indexOnNode * config.tpSize;
    return launchOnNodes(serverNodeGroup?.(index), {
      ...sglangServerSettings(config),
      ...(config.pdDisaggregation === true ? { disaggregation: disaggregationOf(config, index) } : {}),
      name,
      port: config.basePort + index,
      gpuId: firstGpu,
      logPath: join(logsPath, `${name}.log`),
      requestLogDirectory: join(logsPath, `${name}-request-logs`),
      readyTimeoutMs: readyTimeoutMs(config, DEFAULT_READY_TIMEOUT_S),
      placement,
      ...(node === undefined ? {} : { node }),
      ...(signal === undefined ? {} : { signal }),
    });
  },
};

/** A server on one node, or one whose ranks span `nodes` (`--nnodes`). */
function launchOnNodes(nodes: readonly string[] | undefined, settings: SglangLaunchSettings): Promise<ServerHandle> {
  return nodes !== undefined && nodes.length > 1 ? launchSglangAcrossNodes({ ...settings, nodes }) : launchSglangServer(settings);
}

/** SGLang's default transfer backend (server_args.py, `disaggregation_transfer_backend: str = "mooncake"`). */
const SGLANG_DEFAULT_TRANSFER_BACKEND = 'mooncake';

/**
 * Server `index`'s PD role: the first numPrefill prefill, each on its own bootstrap port, the rest decode; every server
 * on one transfer backend, passed explicitly so that the launch line in its log says which. GPUs never overlap: each
 * server takes the next tpSize GPUs of its node, whatever its role.
 */
function disaggregationOf(config: RoutingTestConfig, index: number): SglangDisaggregation {
  const transferBackend = config.disaggregationTransferBackend ?? SGLANG_DEFAULT_TRANSFER_BACKEND;
  if (!isPrefillIndex(config, index)) return { mode: 'decode', transferBackend };
  return { mode: 'prefill', transferBackend, bootstrapPort: prefillBootstrapPort(config, index) as number };
}
