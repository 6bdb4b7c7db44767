import { GROSS_SERVER_TIME_TOLERANCE_S, runWindowOf, screenRecords } from '../analysis/data-quality.js';
import type { Clock } from '../clock/clock.js';
import { createProtocolClient } from '../clients/registry.js';
import { localPlacement } from '../cluster/placement/local/local-placement.js';
import type { NodeTestConfig } from '../config/schema.js';
import { runLoadAcrossGenerators } from '../load/generator-process/run-load-across-generators.js';
import { runLoadAcrossWorkers } from '../load/multi-worker/run-load-across-workers.js';
import type { ProcessPlacement } from '../types/cluster.js';
import type { GeneratorLoss, LoadMode, LoadProgress, LoadResult } from '../types/load.js';
import type { RequestRecord } from '../types/record.js';
import type { EpochSeconds } from '../types/time.js';
import type { PlannedWorkload } from './build-workload.js';
import type { ProgressListener } from './progress.js';

type ClientConfig = Pick<
  NodeTestConfig,
  | 'protocol'
  | 'stream'
  | 'temperature'
  | 'ignoreEos'
  | 'openaiExtensions'
  | 'model'
  | 'modelPath'
  | 'apiKeyEnv'
  | 'connectTimeoutMs'
  | 'firstByteTimeoutMs'
  | 'idleTimeoutMs'
  | 'totalTimeoutMs'
  | 'warmupTimeoutMs'
  | 'maxBodyBytes'
  | 'maxSseEventBytes'
  | 'maxInFlightBodyBytes'
  | 'httpTransport'
  | 'maxConcurrency'
  | 'concurrency'
  | 'thinkTimeMs'
  | 'stages'
  | 'clientWorkers'
  | 'clientNodes'
>;

/** Open loop, unless users are given (`concurrency`, or stages of users): then a closed loop. */
export function loadModeOf(config: Pick<ClientConfig, 'concurrency' | 'thinkTimeMs' | 'stages'>): LoadMode {
  const userStages = config.stages?.every((stage) => stage.concurrency !== undefined) === true ? config.stages : undefined;
  if (config.concurrency === undefined && userStages === undefined) return { kind: 'open' };
  return {
    kind: 'closed',
    concurrency: config.concurrency ?? 0,
    ...(config.thinkTimeMs === undefined ? {} : { thinkTimeMs: config.thinkTimeMs }),
    ...(userStages === undefined ? {} : { stages: userStages.map((stage) => ({ durationS: stage.durationS, concurrency: stage.concurrency as number, ramp: stage.ramp })) }),
  };
}

export interface MeasureLoadOptions {
  config: ClientConfig;
  /** The system under test: the server (node test) or the router (routing test). */
  baseUrl: string;
  workload: PlannedWorkload;
  clock: Clock;
  runId: string;
  startedMs: number;
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  /** Called once when the measured schedule starts, with its origin `t0` on the clock's monotonic scale. */
  onScheduleStart?: (originMs: number) => void;
  /** Called once with the schedule's origin `t0` in epoch seconds, exactly as the result's `startTime`. */
  onStart?: (t0: EpochSeconds) => void;
  /** Called with each measured request's record as soon as it is final. */
  onRecord?: (record: RequestRecord) => void;
  /** With `clientNodes` > 1: where the load-generator processes run, on which nodes, and where their logs go. */
  generators?: { placement: ProcessPlacement; nodes?: readonly string[]; logsPath?: string; onLost?: (loss: GeneratorLoss) => void };
}

/** Creates the protocol client for the system under test and offers it the planned load. */
export async function measureLoad(options: MeasureLoadOptions): Promise<LoadResult> {
  const { config, clock } = options;
  // Built once without the clock: worker threads (with --client-workers) build their own clients from it.
  const clientOptions = {
    baseUrl: options.baseUrl,
    stream: config.stream,
    sampling: { temperature: config.temperature, ignoreEos: config.ignoreEos },
    openaiExtensions: config.openaiExtensions,
    model: config.model ?? config.modelPath,
    // Read from the environment at the last moment and handed only to the client: never stored or written.
    apiKey: process.env[config.apiKeyEnv],
    timeouts: {
      connectMs: config.connectTimeoutMs,
      firstByteMs: config.firstByteTimeoutMs,
      idleMs: config.idleTimeoutMs,
      totalMs: config.totalTimeoutMs,
    },
    limits: { maxBodyBytes: config.maxBodyBytes, maxSseEventBytes: config.maxSseEventBytes, maxInFlightBodyBytes: config.maxInFlightBodyBytes },
    maxConnections: config.maxConcurrency,
    ...(config.httpTransport === undefined ? {} : { httpTransport: config.httpTransport }),
  };
  const client = createProtocolClient(config.protocol, { ...clientOptions, clock });
  let scheduleStarted = false;
  try {
    const shared = {
      requests: options.workload.requests,
      warmupRequests: options.workload.warmupRequests,
      warmupTimeoutMs: config.warmupTimeoutMs,
      arrivalOffsetsMs: options.workload.arrivalOffsetsMs,
      maxConcurrency: config.maxConcurrency,
      mode: loadModeOf(config),
      client,
      clock,
      signal: options.signal,
      requestIdPrefix: `${options.runId}-`,
      ...(options.onStart === undefined ? {} : { onStart: options.onStart }),
      ...(options.onRecord === undefined ? {} : { onRecord: options.onRecord }),
      onProgress: (progress: LoadProgress) => {
        if (!scheduleStarted && progress.phase !== 'warmup') {
          scheduleStarted = true;
          // The load generator's elapsed time counts from t0, so t0 is exactly now minus it.
          options.onScheduleStart?.(clock.nowMs() - progress.elapsedMs);
        }
        options.onProgress?.({
          phase: progress.phase === 'measured' ? 'running' : progress.phase,
          totalRequests: progress.total,
          sent: progress.sent,
          inFlight: progress.inFlight,
          completed: progress.completed,
          failed: progress.failed,
          elapsedMs: clock.nowMs() - options.startedMs,
        });
      },
    };
    const clientSpec = { protocol: config.protocol, options: clientOptions };
    const load =
      config.clientNodes > 1
        ? await runLoadAcrossGenerators({
            ...shared,
            generators: config.clientNodes,
            clientSpec,
            placement: options.generators?.placement ?? localPlacement,
            ...(options.generators?.nodes === undefined ? {} : { nodes: options.generators.nodes }),
            ...(options.generators?.logsPath === undefined ? {} : { logsPath: options.generators.logsPath }),
            ...(options.generators?.onLost === undefined ? {} : { onGeneratorLost: options.generators.onLost }),
          })
        : await runLoadAcrossWorkers({ ...shared, workers: config.clientWorkers, clientSpec });
    // What servers reported that cannot be true is left empty before anything is written (src/analysis/data-quality.ts).
    // Only the gross cases here: a skewed server clock is corrected later (finish-run), then screened finely.
    const window = { ...runWindowOf([...load.warmupRecords, ...load.records], load.endTime), toleranceS: GROSS_SERVER_TIME_TOLERANCE_S };
    screenRecords(load.records, window);
    screenRecords(load.warmupRecords, window);
    return load;
  } finally {
    await client.close().catch(() => undefined);
  }
}
