import { ServelabError } from '../errors/servelab-error.js';
import { didYouMean } from '../utils/did-you-mean.js';
import { routingTestConfigSchema, type FailureAction, type RoutingTestConfig, type RoutingTestConfigInput } from './schema.js';
import { checkLoadShape } from './node-test-config.js';
import { SGLANG_ROUTER_POLICIES, SMG_POLICIES, SMG_PREFILL_POLICIES } from './smg-policies.js';
import { rejectIgnoredSettings } from './setting-rules.js';
import { rejectIgnoredSlurmSettings } from './slurm-job-settings.js';
import { impliedTarget } from './implied-target.js';
import { camelCaseSettings } from './snake-case-settings.js';
import { parseConfig } from './validate.js';
import { checkServerCount } from './machine-capacity.js';
import { parseBandwidth } from '../utils/parse-bandwidth.js';

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
  if (config.target === 'attach' && config.url === undefined && config.workerUrls === undefined && config.pdDisaggregation !== true) {
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
  // First: a PD run's node count (numGpus) is its prefill and decode servers, which the schedule's node numbers index.
  checkPdSettings(config);
  if (config.failureSchedule !== undefined) {
    if (config.target === 'attach' && config.url !== undefined) throw invalid('a failure schedule needs servers servelab launched or can reach (not only an attached router)');
    for (const action of failureActions(config)) {
      if (action.action === 'drain' && config.router === 'nginx') {
        throw invalid(`the failure schedule drains node(s) ${action.nodes.join(', ')}, but nginx cannot remove workers at run time; use --router builtin, smg or sglang-router, or crash/hang instead`);
      }
      if (action.action === 'drain' && config.pdDisaggregation === true && config.router !== 'builtin') {
        // Its restore re-adds the worker with POST /workers {"url"}, which says nothing of the worker's role or
        // bootstrap port: smg would take a prefill server back as a plain worker.
        throw invalid(`the failure schedule drains node(s) ${action.nodes.join(', ')} of a PD cluster, but ${config.router} cannot take a drained prefill or decode server back in its role at run time; use --router builtin, or crash/hang instead`);
      }
      for (const node of action.nodes) {
        if (node >= config.numGpus) throw invalid(`the failure schedule names node ${node}, but nodes are numbered 0 to ${config.numGpus - 1}${pdNodeNumbering(config)}`);
      }
    }
  }
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
 * Prefill/decode disaggregation: the targets and routers that run it, the policies each router knows, and numGpus set
 * to the servers it launches (or attaches to). The PD-only settings without --pd-disaggregation are refused, not ignored.
 */
function checkPdSettings(config: RoutingTestConfig): void {
  const pdOnly = (['numPrefill', 'numDecode', 'prefillPolicy', 'decodePolicy', 'prefillUrls', 'decodeUrls', 'disaggregationTransferBackend', 'disaggregationBootstrapPort', 'kvTransferBandwidth', 'kvTransferLatencyMs'] as const).filter((key) => config[key] !== undefined);
  if (config.pdDisaggregation !== true) {
    if (pdOnly.length > 0) throw invalid(`${pdOnly.map((key) => `--${kebab(key)}`).join(', ')} apply to prefill/decode disaggregation only; add --pd-disaggregation`);
    return;
  }
  if (config.router === 'nginx') throw invalid('--pd-disaggregation needs a router that sends each request to a prefill and a decode server: --router builtin, smg or sglang-router, not nginx');
  if (config.virtualTime && (config.maxConcurrency !== undefined || config.concurrency !== undefined)) {
    throw invalid('--pd-disaggregation --virtual-time runs open-loop arrivals so far: drop --max-concurrency / --concurrency, or run in real time');
  }
  if (config.target !== 'sim') {
    for (const key of ['kvTransferBandwidth', 'kvTransferLatencyMs'] as const) {
      if (config[key] !== undefined) throw invalid(`--${kebab(key)} sets the simulated engine's KV link (--target sim); a real server's link is what it is: drop it for --target ${config.target}`);
    }
  }
  // Checked now, not when the servers start: a misspelt rate should not cost a launch.
  if (config.kvTransferBandwidth !== undefined) parseBandwidth(config.kvTransferBandwidth);
  if (config.target !== 'sglang') {
    for (const key of ['disaggregationTransferBackend', 'disaggregationBootstrapPort'] as const) {
      if (config[key] !== undefined) throw invalid(`--${kebab(key)} is a setting of the SGLang servers servelab launches (--target sglang), not of --target ${config.target}`);
    }
  }
  checkPdPolicies(config);
  if (config.target === 'attach') {
    if (config.url !== undefined) throw invalid('--pd-disaggregation with --target attach starts its own router in front of --prefill-url and --decode-url; drop --url');
    if (config.workerUrls !== undefined) throw invalid('--pd-disaggregation with --target attach takes --prefill-url and --decode-url, not --worker-urls');
    if ((config.prefillUrls ?? []).length === 0 || (config.decodeUrls ?? []).length === 0) throw invalid('--pd-disaggregation with --target attach needs at least one --prefill-url URL[,BOOTSTRAP_PORT|none] and one --decode-url URL');
    if (config.numPrefill !== undefined || config.numDecode !== undefined) throw invalid('--num-prefill and --num-decode count the servers servelab launches; attached ones are counted from --prefill-url and --decode-url: drop them');
    for (const entry of config.prefillUrls ?? []) parsePrefillUrl(entry);
    // Both servers of a PD request write a line with its rid; in one attached directory nothing says which server
    // wrote which, and a prefill line taken for the decode server's would fill the record's server columns wrongly.
    if (config.serverRequestLogDir !== undefined) {
      throw invalid("--server-request-log-dir with --pd-disaggregation: the prefill and the decode server each write a line per request, and one attached directory does not say which server wrote which; drop it (servers servelab launches with --target sglang are joined in their roles)");
    }
    config.numPrefill = (config.prefillUrls ?? []).length;
    config.numDecode = (config.decodeUrls ?? []).length;
  } else {
    if (config.prefillUrls !== undefined || config.decodeUrls !== undefined) throw invalid(`--prefill-url and --decode-url attach to running servers (--target attach); --target ${config.target} launches its own`);
    config.numPrefill ??= 1;
    config.numDecode ??= 1;
  }
  config.numGpus = config.numPrefill + config.numDecode;
}

/**
 * A PD run's prefill and decode policies, each checked against the router that will run it: smg takes its
 * PREFILL_POLICY_CHOICES for --prefill-policy (its common ones and `bucket`) and its common ones for --decode-policy;
 * sglang-router its four. The builtin router's names are checked against its registry by RoutingTest.
 */
function checkPdPolicies(config: RoutingTestConfig): void {
  const known = config.router === 'smg' ? { prefill: SMG_PREFILL_POLICIES, decode: SMG_POLICIES } : config.router === 'sglang-router' ? { prefill: SGLANG_ROUTER_POLICIES, decode: SGLANG_ROUTER_POLICIES } : undefined;
  if (known === undefined) return;
  for (const [key, names] of [['prefillPolicy', known.prefill], ['decodePolicy', known.decode]] as const) {
    const name = config[key];
    if (name !== undefined && !(names as readonly string[]).includes(name)) {
      throw invalid(`--router ${config.router} takes ${names.join(', ')} for --${kebab(key)}, not ${name}.${didYouMean(name, names)}`);
    }
  }
}

/** `URL`, `URL,BOOTSTRAP_PORT` or `URL,none` (smg's `--prefill URL [BOOTSTRAP_PORT|none]`): a URL alone has no bootstrap port. */
export function parsePrefillUrl(text: string): { url: string; bootstrapPort: number | null } {
  const comma = text.lastIndexOf(',');
  const url = comma < 0 ? text : text.slice(0, comma);
  const portText = comma < 0 ? 'none' : text.slice(comma + 1).trim();
  if (!/^https?:\/\/[^\s,]+$/.test(url)) throw invalid(`--prefill-url "${text}" does not start with a URL; give URL, URL,BOOTSTRAP_PORT or URL,none, e.g. http://10.0.0.2:30000,8998`);
  if (portText.toLowerCase() === 'none') return { url, bootstrapPort: null };
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalid(`bad bootstrap port in --prefill-url "${text}": give URL, URL,PORT (1-65535) or URL,none`);
  return { url, bootstrapPort: port };
}

/** How a PD run numbers its nodes, for a message about a schedule's node numbers: prefill first, then decode. */
function pdNodeNumbering(config: RoutingTestConfig): string {
  if (config.pdDisaggregation !== true) return '';
  const numPrefill = config.numPrefill ?? 1;
  const prefill = numPrefill === 1 ? 'node 0 prefills' : `nodes 0-${numPrefill - 1} prefill`;
  const decode = config.numGpus - numPrefill === 1 ? `node ${numPrefill} decodes` : `nodes ${numPrefill}-${config.numGpus - 1} decode`;
  return ` (${prefill}, ${decode})`;
}

function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`).replace(/-urls$/, '-url');
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
