import { isDeepStrictEqual } from 'node:util';
import { ServelabError } from '../errors/servelab-error.js';
import { nodeTestConfigSchema, type NodeTestConfig } from './schema.js';
import { toKebabCase } from './validate.js';

function invalid(message: string): ServelabError {
  return new ServelabError('INVALID_CONFIG', `invalid configuration: ${message}`);
}

const SETTINGS_OF_DATASET: Record<string, string[]> = {
  random: ['randomInputLen', 'randomOutputLen', 'randomRangeRatio'],
  'random-ids': ['randomInputLen', 'randomOutputLen', 'randomRangeRatio'],
  sharegpt: ['sharegptOutputLen'],
  'shared-prefix': ['gspNumGroups', 'gspPromptsPerGroup', 'gspSystemPromptLen', 'gspQuestionLen', 'gspOutputLen', 'gspZipfExponent'],
};

/**
 * Settings only a launched SGLang server uses: the simulated engine has no GPU, weights or compiler. (`pythonExecutable`
 * is not among them: it also runs smg and sglang-router in front of simulated servers.)
 */
const REAL_SERVER_SETTINGS = ['gpuId', 'tpSize', 'memFractionStatic', 'enableTorchCompile', 'quantization', 'extraServerArgs'];

/**
 * Refuses settings the user gave that the rest of the configuration would silently ignore (a burstiness without gamma
 * arrivals, shared-prefix lengths for a random dataset, ...): a run that quietly measured something else than asked
 * is worse than no run. Only settings the input gives a value other than their default count, so defaults never
 * trigger these rules, and a run's own config.json (which lists every setting) reads back.
 */
export function rejectIgnoredSettings(input: Record<string, unknown>, config: NodeTestConfig): void {
  const defaults = nodeTestConfigSchema.parse({}) as Record<string, unknown>;
  const given = (key: string): boolean => input[key] !== undefined && !isDeepStrictEqual(input[key], defaults[key]);
  const flag = (key: string): string => `--${toKebabCase(key)}`;
  if (given('burstiness') && config.arrival !== 'gamma') throw invalid(`${flag('burstiness')} shapes gamma arrivals only; add --arrival gamma (the arrival process is ${config.arrival})`);
  if (given('arrivalDraw') && (config.arrival === 'constant' || config.arrival === 'trace' || config.stages !== undefined)) {
    throw invalid(`${flag('arrivalDraw')} ${String(config.arrivalDraw)} draws poisson or gamma gaps at one rate; ${config.stages !== undefined ? 'staged load draws independent gaps already' : `the ${config.arrival} process draws none`}: drop it`);
  }
  for (const key of ['tracePath', 'traceTimeScale']) {
    if (given(key) && config.arrival !== 'trace') throw invalid(`${flag(key)} applies to trace replay only; add --arrival trace`);
  }
  const datasetSpecific = Object.values(SETTINGS_OF_DATASET).flat();
  const ownSettings = SETTINGS_OF_DATASET[config.datasetName] ?? [];
  for (const key of new Set(datasetSpecific)) {
    if (given(key) && !ownSettings.includes(key)) {
      const owners = Object.entries(SETTINGS_OF_DATASET).filter(([, keys]) => keys.includes(key)).map(([name]) => name);
      throw invalid(`${flag(key)} applies to --dataset-name ${owners.join(' or ')}, not ${config.datasetName}`);
    }
  }
  const closedLoop = config.concurrency !== undefined || config.stages?.some((stage) => stage.concurrency !== undefined) === true;
  if (given('requestRate') && closedLoop) throw invalid('--request-rate sets an open loop\'s arrivals; a closed loop (--concurrency or stages of users) has none: drop one of them');
  if (given('requestRate') && config.stages !== undefined && !closedLoop) throw invalid('--request-rate and --stages both set the rate; the stages\' rates apply, so drop --request-rate');
  if (config.datasetName === 'random-ids' && config.protocol === 'openai-chat') {
    throw invalid('--dataset-name random-ids sends token ids, which /v1/chat/completions cannot take; use --protocol sglang or openai-completions, or a text dataset');
  }
  if (config.virtualTime && config.protocol !== 'sglang') throw invalid(`--virtual-time simulates SGLang's native protocol; drop --protocol ${config.protocol}`);
  if (config.virtualTime && !config.stream) throw invalid('--virtual-time simulates streamed requests; drop --no-stream');
  if (given('twinSensitivity') && !config.virtualTime) {
    throw invalid(`${flag('twinSensitivity')} sizes the sensitivity band a --virtual-time run adds; a real-time run has none: add --virtual-time, or drop it`);
  }
  if (config.target === 'sim' || config.virtualTime) {
    const realServerOnly = REAL_SERVER_SETTINGS.filter((key) => given(key));
    if (realServerOnly.length > 0) {
      const them = realServerOnly.length > 1 ? 'them' : 'it';
      throw invalid(
        `${realServerOnly.map(flag).join(', ')} ${realServerOnly.length > 1 ? 'configure' : 'configures'} a real SGLang server, and the simulated engine has none to apply ${them} to; run SGLang (--target sglang, or drop --target sim: a model or a GPU without a target means SGLang), or drop ${them}`,
      );
    }
  }
  if (config.launcher === 'slurm' && config.virtualTime) throw invalid('--virtual-time launches nothing, so there is nothing for --launcher slurm to place: drop one of them');
  if (config.launcher === 'slurm' && config.target === 'attach') throw invalid('--target attach launches no server, so there is nothing for --launcher slurm to place: drop --launcher slurm, or let servelab launch the servers (--target sim or sglang)');
  if (config.nnodes !== undefined && config.nnodes > 1 && (config.target !== 'sglang' || config.launcher !== 'slurm')) {
    throw invalid(`--nnodes ${config.nnodes} spans one SGLang server over nodes of a Slurm allocation; it needs --target sglang and --launcher slurm`);
  }
  if (config.nnodes !== undefined && config.nnodes > 1 && config.gpusPerNode !== undefined) throw invalid('--nnodes gives each server whole nodes, one rank a node, so --gpus-per-node has nothing to share: drop one of them');
  if (config.gpusPerNode !== undefined && config.launcher !== 'slurm') throw invalid('--gpus-per-node says how many servers share a Slurm node; add --launcher slurm, or drop it');
  if (given('ignoreEos') && !config.ignoreEos && (config.target === 'sim' || config.virtualTime)) {
    throw invalid(
      '--no-ignore-eos lets a model stop at its end-of-sequence token, and the simulated engine has none: every request generates its full output length; drop --no-ignore-eos, or run against a real server (--target sglang or attach)',
    );
  }
}
