import { checkMachineCapacity } from '../config/machine-capacity.js';
import type { NodeTestConfig } from '../config/schema.js';
import type { WorkloadRequest } from '../types/workload.js';
import { SeededRandom } from '../utils/random.js';
import { loadDataset } from '../workload/datasets/dataset-registry.js';
import { createArrivalSchedule } from '../workload/arrivals/arrival-registry.js';
import { scheduleFromRequestTimestamps } from '../workload/arrivals/trace/request-timestamps.js';

export interface PlannedWorkload {
  requests: WorkloadRequest[];
  warmupRequests: WorkloadRequest[];
  arrivalOffsetsMs: Float64Array;
  /** Things the user should know about the workload (a dataset that had fewer requests than asked for, ...). */
  notices: string[];
}

type WorkloadConfig = Pick<
  NodeTestConfig,
  | 'seed'
  | 'numPrompts'
  | 'warmupRequests'
  | 'datasetName'
  | 'datasetPath'
  | 'randomInputLen'
  | 'randomOutputLen'
  | 'randomRangeRatio'
  | 'sharegptOutputLen'
  | 'gspNumGroups'
  | 'gspPromptsPerGroup'
  | 'gspSystemPromptLen'
  | 'gspQuestionLen'
  | 'gspOutputLen'
  | 'arrival'
  | 'requestRate'
  | 'burstiness'
  | 'arrivalDraw'
  | 'tracePath'
  | 'traceTimeScale'
  | 'gspZipfExponent'
  | 'gspNumTurns'
  | 'gspGroupDistribution'
  | 'gspZipfAlpha'
  | 'gspSendRoutingKey'
  | 'gspOrdered'
  | 'mooncakeNumRounds'
  | 'stages'
  | 'tokenizerPath'
>;

/**
 * Draws the dataset and the arrival schedule from the run's seed. Each gets its own random stream, so changing the
 * arrival process never changes the prompts and vice versa. With a generated dataset, warmup requests are extra draws,
 * so they warm the server without priming its cache for the measured prompts; a finite dataset repeats its first
 * requests as warmups (their prefixes are then cached), so no measured request is lost to the warmup.
 */
export async function buildWorkload(config: WorkloadConfig): Promise<PlannedWorkload> {
  // Before anything is allocated: settings far beyond this process's memory get one line, not a V8 abort.
  checkMachineCapacity(config);
  const root = new SeededRandom(config.seed);
  const datasetRandom = root.fork();
  const drawsWarmups = config.datasetName === 'random' || config.datasetName === 'random-ids';
  const arrivalRandom = root.fork();
  const all = await loadDataset(
    {
      datasetName: config.datasetName,
      datasetPath: config.datasetPath,
      numPrompts: config.numPrompts + (drawsWarmups ? config.warmupRequests : 0),
      randomInputLen: config.randomInputLen,
      randomOutputLen: config.randomOutputLen,
      randomRangeRatio: config.randomRangeRatio,
      sharegptOutputLen: config.sharegptOutputLen,
      gspNumGroups: config.gspNumGroups,
      gspPromptsPerGroup: config.gspPromptsPerGroup,
      gspSystemPromptLen: config.gspSystemPromptLen,
      gspQuestionLen: config.gspQuestionLen,
      gspOutputLen: config.gspOutputLen,
      gspZipfExponent: config.gspZipfExponent,
      gspNumTurns: config.gspNumTurns,
      gspGroupDistribution: config.gspGroupDistribution,
      gspZipfAlpha: config.gspZipfAlpha,
      gspSendRoutingKey: config.gspSendRoutingKey,
      gspOrdered: config.gspOrdered,
      mooncakeNumRounds: config.mooncakeNumRounds,
      tokenizerPath: config.tokenizerPath,
    },
    datasetRandom,
  );
  // Generated datasets draw the warmups as extra requests; a finite one (a file, or shared-prefix's fixed groups)
  // repeats its first requests instead, so that warming up never takes a measured request away.
  const warmupCount = drawsWarmups ? Math.min(config.warmupRequests, Math.max(0, all.length - 1)) : 0;
  const requests = all.slice(0, all.length - warmupCount).map((request, index) => ({ ...request, datasetIndex: index }));
  const warmupRequests = drawsWarmups ? all.slice(all.length - warmupCount) : all.slice(0, config.warmupRequests);
  // A trace with no trace file replays the timestamps a custom dataset's rows carry.
  if (config.arrival === 'trace' && config.tracePath === undefined) {
    return { requests, warmupRequests, arrivalOffsetsMs: scheduleFromRequestTimestamps(requests, config.traceTimeScale), notices: workloadNotices(config, requests.length) };
  }
  const arrivalOffsetsMs = await createArrivalSchedule(
    {
      process: config.arrival,
      requestRate: config.requestRate,
      burstiness: config.burstiness,
      draw: config.arrivalDraw,
      tracePath: config.tracePath,
      traceTimeScale: config.traceTimeScale,
      // Stages of rates shape an open loop's arrivals; stages of users are the closed loop's (see loadModeOf).
      stages: config.stages?.every((stage) => stage.rate !== undefined) === true ? config.stages.map((stage) => ({ durationS: stage.durationS, rate: stage.rate as number, ramp: stage.ramp })) : undefined,
    },
    requests.length,
    arrivalRandom,
  );
  return { requests, warmupRequests, arrivalOffsetsMs, notices: workloadNotices(config, requests.length) };
}

/**
 * A workload whose size differs from --num-prompts is said, never run quietly: a finite dataset may hold fewer usable
 * requests, and shared-prefix makes its groups × prompts per group, as SGLang does, whatever --num-prompts says.
 */
function workloadNotices(config: Pick<WorkloadConfig, 'numPrompts' | 'datasetName' | 'gspNumGroups' | 'gspPromptsPerGroup'>, measured: number): string[] {
  if (config.datasetName === 'shared-prefix') {
    if (measured === config.numPrompts) return [];
    const { gspNumGroups: groups, gspPromptsPerGroup: perGroup } = config;
    const made = groups !== undefined && perGroup !== undefined && groups * perGroup === measured ? ` (--gsp-num-groups ${groups} × --gsp-prompts-per-group ${perGroup})` : '';
    return [`the shared-prefix dataset made ${measured} requests${made}, not the ${config.numPrompts} asked for (--num-prompts); the run measured ${measured}`];
  }
  if (measured >= config.numPrompts) return [];
  return [`the ${config.datasetName} dataset gave ${measured} usable requests of the ${config.numPrompts} asked for (--num-prompts); the run measured ${measured}`];
}

/**
 * The run's target arrival rate, or NaN when it has none: a closed loop, stages and trace replay set their own pace,
 * and reporting `requestRate`'s default (inf) for them would be wrong.
 */
export function targetRateOf(config: Pick<WorkloadConfig, 'requestRate' | 'stages' | 'arrival'> & { concurrency?: number }): number {
  if (config.concurrency !== undefined || config.stages !== undefined || config.arrival === 'trace') return Number.NaN;
  return config.requestRate;
}
