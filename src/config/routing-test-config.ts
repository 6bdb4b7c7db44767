import { ServelabError } from '../errors/servelab-error.js';
import { didYouMean } from '../utils/did-you-mean.js';
import { routingTestConfigSchema, type FailureAction, type RoutingTestConfig, type RoutingTestConfigInput } from './schema.js';
import { checkLoadShape } from './node-test-config.js';
import { SGLANG_ROUTER_POLICIES, SMG_POLICIES } from './smg-policies.js';
import { rejectIgnoredSettings } from './setting-rules.js';
import { rejectIgnoredSlurmSettings } from './slurm-job-settings.js';
import { impliedTarget } from './implied-target.js';
import { camelCaseSettings } from './snake-case-settings.js';
import { parseConfig } from './validate.js';
import { checkServerCount } from './machine-capacity.js';

function invalid(message: string): ServelabError {
  return new ServelabError('INVALID_CONFIG', `invalid configuration: ${message}`);
}

/** Validates a routing test's configuration, including the rules that tie settings together. */
export function resolveRoutingTestConfig(given: RoutingTestConfigInput | Record<string, unknown>): RoutingTestConfig {
  // The first users' snake_case names (model_path, request_rate, ...) load as servelab's camelCase ones, and a model
  // or a GPU without a target means SGLang, as it did in their framework.
  const input = impliedTarget(camelCaseSettings(given as Record<string, unknown>));
  const config = parseConfig(routingTestConfigSchema, input);
  rejectIgnoredSettings(input, config);
  rejectIgnoredSlurmSettings(config);
  // nginx balances by round robin or least connections only: without a policy given, it round-robins.
  if (config.router === 'nginx' && input['routingPolicy'] === undefined) config.routingPolicy = 'round_robin';
  if (config.target === 'sglang' && config.modelPath === undefined) throw invalid('--target sglang needs --model-path');
  if (config.target === 'attach' && config.url === undefined && config.workerUrls === undefined) {
    throw invalid('--target attach needs --url (a running router) or --worker-urls (running servers, behind a router servelab starts)');
  }
  if (config.workerUrls !== undefined && config.workerUrls.length > 0) config.numGpus = config.workerUrls.length;
  if ((config.datasetName === 'sharegpt' || config.datasetName === 'custom' || config.datasetName === 'mooncake') && config.datasetPath === undefined) {
    throw invalid(`--dataset-name ${config.datasetName} needs --dataset-path (a local file; servelab never downloads datasets)`);
  }
  if (config.router === 'nginx' && !['round_robin', 'least_conn', 'shortest_queue'].includes(config.routingPolicy)) {
    throw invalid(
      `--router nginx balances by round_robin or least_conn, not ${config.routingPolicy}; use --router builtin for ${config.routingPolicy}.${didYouMean(config.routingPolicy, ['round_robin', 'least_conn'])}`,
    );
  }
  if (config.virtualTime && config.router !== 'builtin') throw invalid(`--virtual-time simulates the builtin router's policies; drop --router ${config.router}`);
  if (config.virtualTime && config.failureSchedule !== undefined) throw invalid('--virtual-time does not simulate node failures yet; run the failure schedule in real time (drop --virtual-time)');
  if (config.router === 'sglang-router' && !(SGLANG_ROUTER_POLICIES as readonly string[]).includes(config.routingPolicy)) {
    throw invalid(
      `--router sglang-router supports ${SGLANG_ROUTER_POLICIES.join(', ')}, not ${config.routingPolicy}; use --router smg for smg's newer policies.${didYouMean(config.routingPolicy, SGLANG_ROUTER_POLICIES)}`,
    );
  }
  if (config.router === 'smg' && !(SMG_POLICIES as readonly string[]).includes(config.routingPolicy)) {
    throw invalid(`--router smg supports ${SMG_POLICIES.join(', ')}, not ${config.routingPolicy}`);
  }
  if (config.failureSchedule !== undefined) {
    if (config.target === 'attach' && config.url !== undefined) throw invalid('a failure schedule needs servers servelab launched or can reach (not only an attached router)');
    for (const action of failureActions(config)) {
      if (action.action === 'drain' && config.router === 'nginx') {
        throw invalid(`the failure schedule drains node(s) ${action.nodes.join(', ')}, but nginx cannot remove workers at run time; use --router builtin, smg or sglang-router, or crash/hang instead`);
      }
      for (const node of action.nodes) {
        if (node >= config.numGpus) throw invalid(`the failure schedule names node ${node}, but nodes are numbered 0 to ${config.numGpus - 1}`);
      }
    }
  }
  checkPdSettings(config);
  checkLoadShape(config);
  // Before anything is launched: virtual time simulates its servers in this process, so only real-time runs count;
  // servers placed by Slurm run on its nodes, whose capacity this host's says nothing about.
  if (!config.virtualTime && config.launcher !== 'slurm') checkServerCount(config.numGpus, config.target);
  if (config.virtualTime && config.target !== 'sim') {
    throw new ServelabError('INVALID_CONFIG', `invalid configuration: --virtual-time simulates servelab's engines; it needs --target sim, not ${config.target}`);
  }
  return config;
}

/**
 * Prefill/decode disaggregation: what this version runs (the sim behind the builtin router, launched by servelab), and
 * numGpus set to the servers it launches. The PD-only settings without --pd-disaggregation are refused, not ignored.
 */
function checkPdSettings(config: RoutingTestConfig): void {
  const pdOnly = (['numPrefill', 'numDecode', 'prefillPolicy', 'decodePolicy'] as const).filter((key) => config[key] !== undefined);
  if (config.pdDisaggregation !== true) {
    if (pdOnly.length > 0) throw invalid(`${pdOnly.map((key) => `--${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`).join(', ')} apply to prefill/decode disaggregation only; add --pd-disaggregation`);
    return;
  }
  if (config.target !== 'sim') throw invalid(`--pd-disaggregation runs on --target sim so far, not ${config.target}`);
  if (config.router !== 'builtin') throw invalid(`--pd-disaggregation runs behind --router builtin so far, not ${config.router}`);
  if (config.virtualTime) throw invalid('--pd-disaggregation runs in real time so far; drop --virtual-time');
  if (config.failureSchedule !== undefined) throw invalid('--pd-disaggregation does not take a failure schedule yet; drop --failure-schedule');
  config.numPrefill ??= 1;
  config.numDecode ??= 1;
  config.numGpus = config.numPrefill + config.numDecode;
}

/**
 * The failure schedule as explicit actions in time order. The map form `{ "2": [1], "5": [] }` means "from 2 s, node 1
 * is failed; from 5 s, none is": each entry crashes the nodes newly listed and restores the nodes no longer listed.
 */
export function failureActions(config: Pick<RoutingTestConfig, 'failureSchedule'>): FailureAction[] {
  const schedule = config.failureSchedule;
  if (schedule === undefined) return [];
  if (Array.isArray(schedule)) return [...schedule].sort((first, second) => first.atS - second.atS);
  const actions: FailureAction[] = [];
  let failed = new Set<number>();
  const entries = Object.entries(schedule)
    .map(([seconds, nodes]) => ({ atS: Number(seconds), nodes }))
    .sort((first, second) => first.atS - second.atS);
  for (const entry of entries) {
    const next = new Set(entry.nodes);
    const restored = [...failed].filter((node) => !next.has(node));
    const crashed = [...next].filter((node) => !failed.has(node));
    if (restored.length > 0) actions.push({ atS: entry.atS, action: 'restore', nodes: restored });
    if (crashed.length > 0) actions.push({ atS: entry.atS, action: 'crash', nodes: crashed });
    failed = next;
  }
  return actions;
}
