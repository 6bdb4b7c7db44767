import { ServelabError } from '../errors/servelab-error.js';
import { nodeTestConfigSchema, type NodeTestConfig, type NodeTestConfigInput } from './schema.js';
import { rejectIgnoredSettings } from './setting-rules.js';
import { rejectIgnoredSlurmSettings } from './slurm-job-settings.js';
import { impliedTarget } from './implied-target.js';
import { camelCaseSettings } from './snake-case-settings.js';
import { parseConfig } from './validate.js';
import { checkClientWorkers } from './machine-capacity.js';

/** Validates a node test's configuration, including the rules that tie settings together. */
export function resolveNodeTestConfig(given: NodeTestConfigInput | Record<string, unknown>): NodeTestConfig {
  // The first users' snake_case names (model_path, request_rate, ...) load as servelab's camelCase ones, and a model
  // or a GPU without a target means SGLang, as it did in their framework.
  const input = impliedTarget(camelCaseSettings(given as Record<string, unknown>));
  rejectPdNodeTest(input);
  const config = parseConfig(nodeTestConfigSchema, input);
  rejectIgnoredSettings(input, config);
  rejectIgnoredSlurmSettings(config);
  if (config.target === 'attach' && config.url === undefined) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --target attach needs --url (the running server, e.g. http://127.0.0.1:30000)');
  }
  if (config.target === 'sglang' && config.modelPath === undefined) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --target sglang needs --model-path (a local folder or a model name SGLang can load)');
  }
  if ((config.datasetName === 'sharegpt' || config.datasetName === 'custom' || config.datasetName === 'mooncake') && config.datasetPath === undefined) {
    throw new ServelabError('INVALID_CONFIG', `invalid configuration: --dataset-name ${config.datasetName} needs --dataset-path (a local file; servelab never downloads datasets)`);
  }
  const gpuIds = Array.isArray(config.gpuId) ? config.gpuId : [config.gpuId];
  if (config.target === 'sglang' && gpuIds.length !== 1 && gpuIds.length !== config.tpSize) {
    throw new ServelabError('INVALID_CONFIG', `invalid configuration: --gpu-id lists ${gpuIds.length} GPUs but --tp-size is ${config.tpSize}; give one id (the first of ${config.tpSize} consecutive GPUs) or exactly ${config.tpSize}`);
  }
  if (config.virtualTime && config.target !== 'sim') {
    throw new ServelabError('INVALID_CONFIG', `invalid configuration: --virtual-time simulates servelab's engines; it needs --target sim, not ${config.target}`);
  }
  checkLoadShape(config);
  return config;
}

/** Rules about open loop, closed loop and stages, shared by node and routing tests. */
export function checkLoadShape(config: Pick<NodeTestConfig, 'stages' | 'concurrency' | 'thinkTimeMs' | 'virtualTime' | 'maxConcurrency' | 'arrival' | 'tracePath' | 'datasetName' | 'clientWorkers' | 'clientNodes'>): void {
  if (config.arrival === 'trace' && config.tracePath === undefined && config.datasetName !== 'custom') {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --arrival trace needs --trace-path (a file of arrival timestamps), or a custom dataset whose rows carry timestamps');
  }
  const stages = config.stages ?? [];
  const rateStages = stages.filter((stage) => stage.rate !== undefined).length;
  const userStages = stages.filter((stage) => stage.concurrency !== undefined).length;
  if (stages.length > 0 && rateStages !== stages.length && userStages !== stages.length) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --stages: give every stage a rate (open loop) or every stage a concurrency (closed loop), not a mix');
  }
  const closedLoop = config.concurrency !== undefined || userStages > 0;
  checkClientWorkers(config.clientWorkers);
  if (config.clientWorkers > 1 && closedLoop) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --client-workers spreads an open loop over threads; a closed loop (--concurrency) runs in one');
  }
  if (config.clientWorkers > 1 && config.maxConcurrency !== undefined && config.maxConcurrency < config.clientWorkers) {
    throw new ServelabError('INVALID_CONFIG', `invalid configuration: --max-concurrency ${config.maxConcurrency} is split over ${config.clientWorkers} client workers; give at least ${config.clientWorkers}`);
  }
  checkClientNodes(config, closedLoop);
  if (config.thinkTimeMs !== undefined && !closedLoop) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --think-time applies to a closed loop; give --concurrency N (users) too');
  }
  if (closedLoop && config.maxConcurrency !== undefined) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --max-concurrency caps an open loop; a closed loop (--concurrency) already holds exactly N in flight');
  }
  if (config.virtualTime && (userStages > 0 || (config.thinkTimeMs ?? 0) > 0)) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --virtual-time runs a closed loop only as a fixed --concurrency with no think time; drop --stages of users or --think-time');
  }
}

/** What several load-generator processes can run: an open loop in real time, one thread each (for now). */
function checkClientNodes(config: Pick<NodeTestConfig, 'clientNodes' | 'clientWorkers' | 'virtualTime' | 'maxConcurrency'>, closedLoop: boolean): void {
  if (config.clientNodes === 1) return;
  if (closedLoop) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --client-nodes spreads an open loop over load-generator processes; a closed loop (--concurrency) runs in one');
  }
  if (config.virtualTime) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --client-nodes runs real load generators; --virtual-time has no real client to spread');
  }
  if (config.clientWorkers > 1) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --client-nodes runs one thread per load generator; drop --client-workers, or give more --client-nodes');
  }
  if (config.maxConcurrency !== undefined && config.maxConcurrency < config.clientNodes) {
    throw new ServelabError('INVALID_CONFIG', `invalid configuration: --max-concurrency ${config.maxConcurrency} is split over ${config.clientNodes} load generators; give at least ${config.clientNodes}`);
  }
}

/**
 * A prefill/decode pair is not one server: SGLang's PD servers refuse a request without a bootstrap room (400), and
 * only a router injects one and sends both legs at once. So a pair is measured by a routing test of one prefill and
 * one decode server, which this says instead of an unknown-setting error.
 */
function rejectPdNodeTest(input: Record<string, unknown>): void {
  const pdKeys = ['pdDisaggregation', 'numPrefill', 'numDecode', 'prefillUrls', 'decodeUrls', 'prefillPolicy', 'decodePolicy'].filter((key) => input[key] !== undefined && input[key] !== false);
  if (pdKeys.length === 0) return;
  throw new ServelabError(
    'INVALID_CONFIG',
    'invalid configuration: a node test sends to one server, and a prefill/decode pair needs a router to give each request a bootstrap room and send both legs; ' +
      'measure one pair with a routing test: servelab route --pd-disaggregation --num-prefill 1 --num-decode 1 (or --target attach --prefill-url URL[,BOOTSTRAP_PORT] --decode-url URL)',
  );
}
