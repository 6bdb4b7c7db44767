/**
 * summary.json format 2 names every field in camelCase with its unit (docs/metrics.md, "summary.json layout"). The
 * in-memory `Summary` keeps format 1's names (the snake_case derived-column keys, the verdict's and harness's
 * snake_case fields); this table maps one to the other at the file boundary, both ways.
 *
 * The scheme, applied mechanically: camelCase; a duration or a statistics object in seconds ends in `Seconds`
 * (`ttftSeconds`: its `p50`, `p99`, ... are seconds); milliseconds end in `Ms`; an instant in epoch seconds ends in
 * `EpochSeconds`, one in seconds after the run's t0 in `SinceT0Seconds`; a rate ends in `PerSecond`; token counts end
 * in `Tokens`. Keys that are data (error classes, column names, node URLs, `field:reason`) are kept as they are.
 */

/** A path of format-1 keys from the file's root, `/`-separated; `*` stands for every item of an array or every key of a map. */
export interface SummaryRename {
  path: string;
  name: string;
}

/** The derived columns' statistics (`metrics.latencies.<column>`), all in seconds. */
const LATENCY_COLUMNS: Readonly<Record<string, string>> = {
  total_latency: 'totalLatencySeconds',
  server_latency: 'serverLatencySeconds',
  ttft: 'ttftSeconds',
  server_ttft: 'serverTtftSeconds',
  queue_time_in_router: 'queueTimeInRouterSeconds',
  network_time: 'networkTimeSeconds',
  tokenize_time: 'tokenizeTimeSeconds',
  pure_queue_time: 'pureQueueTimeSeconds',
  queue_time_in_server: 'queueTimeInServerSeconds',
  prefill_time: 'prefillTimeSeconds',
  decode_time: 'decodeTimeSeconds',
  tpot: 'tpotSeconds',
  send_lag: 'sendLagSeconds',
  intended_latency: 'intendedLatencySeconds',
};

const CONCURRENCY_STAGES: Readonly<Record<string, string>> = {
  in_system: 'inSystem',
  in_router: 'inRouter',
  waiting_in_server_queue: 'waitingInServerQueue',
  running: 'running',
};

const PROCESS_HEALTH: Readonly<Record<string, string>> = {
  event_loop_delay_ms: 'eventLoopDelayMs',
  cpu_s: 'cpuSeconds',
  wall_s: 'wallSeconds',
  cpu_share_of_one_core: 'cpuShareOfOneCore',
  step_lateness_ms: 'stepLatenessMs',
  send_lag_p99_ms: 'sendLagP99Ms',
};

const HOST_CPU: Readonly<Record<string, string>> = {
  interval_ms: 'intervalMs',
  busy_share_mean: 'busyShareMean',
  busy_share_max: 'busyShareMax',
  share_of_samples_over_threshold: 'shareOfSamplesOverThreshold',
};

function under(prefix: string, names: Readonly<Record<string, string>>): SummaryRename[] {
  return Object.entries(names).map(([key, name]) => ({ path: `${prefix}/${key}`, name }));
}

function harnessMeasurements(prefix: string): SummaryRename[] {
  return [...under(`${prefix}/processes/*`, PROCESS_HEALTH), { path: `${prefix}/host_cpu`, name: 'hostCpu' }, ...under(`${prefix}/host_cpu`, HOST_CPU)];
}

function stageConcurrency(stage: string): SummaryRename[] {
  const prefix = `metrics/concurrency/stages/${stage}`;
  return [
    { path: prefix, name: CONCURRENCY_STAGES[stage] ?? stage },
    { path: `${prefix}/entryRate`, name: 'entryRatePerSecond' },
    { path: `${prefix}/littlesLaw/windowStart`, name: 'windowStartEpochSeconds' },
    { path: `${prefix}/littlesLaw/windowEnd`, name: 'windowEndEpochSeconds' },
    { path: `${prefix}/littlesLaw/entryRate`, name: 'entryRatePerSecond' },
  ];
}

function windowLoad(prefix: string): SummaryRename[] {
  return under(prefix, { from: 'fromEpochSeconds', to: 'toEpochSeconds', ttftP50: 'ttftP50Seconds' });
}

/** Every name format 2 changes, parents before their children. */
export const SUMMARY_RENAMES: readonly SummaryRename[] = [
  ...under('run', { t0: 't0EpochSeconds', startTime: 'startEpochSeconds', endTime: 'endEpochSeconds', requestRate: 'targetRequestsPerSecond' }),
  { path: 'events/*/time', name: 'timeSinceT0Seconds' },
  { path: 'notices/*/atS', name: 'atSinceT0Seconds' },
  ...under('metrics/verdict/evidence', {
    window_start_s: 'windowStartSinceT0Seconds',
    window_end_s: 'windowEndSinceT0Seconds',
    offered_rate_per_s: 'offeredRatePerSecond',
    served_rate_per_s: 'servedRatePerSecond',
    served_to_offered_ratio: 'servedToOfferedRatio',
    in_system_growth_per_s: 'inSystemGrowthPerSecond',
    in_system_growth_over_window: 'inSystemGrowthOverWindow',
    in_system_at_window_start: 'inSystemAtWindowStart',
    in_system_at_window_end: 'inSystemAtWindowEnd',
    in_system_peak: 'inSystemPeak',
    drain_after_last_arrival_s: 'drainAfterLastArrivalSeconds',
    unfinished_requests: 'unfinishedRequests',
  }),
  ...under('metrics/verdict/thresholds', {
    fill_share: 'fillShare',
    min_growth_share: 'minGrowthShare',
    min_growth_requests: 'minGrowthRequests',
    min_growth_of_start_level: 'minGrowthOfStartLevel',
  }),
  ...under('metrics/harness', { stages_flagged: 'stagesFlagged', nodes_flagged: 'nodesFlagged' }),
  ...harnessMeasurements('metrics/harness'),
  ...under('metrics/harness/thresholds', {
    event_loop_delay_p99_ms: 'eventLoopDelayP99Ms',
    step_lateness_p99_ms: 'stepLatenessP99Ms',
    send_lag_p99_ms: 'sendLagP99Ms',
    process_cpu_share_of_one_core: 'processCpuShareOfOneCore',
    host_cpu_busy_share: 'hostCpuBusyShare',
    metric_error_share: 'metricErrorShare',
  }),
  ...under('metrics', {
    firstArrivalTime: 'firstArrivalEpochSeconds',
    lastFinishTime: 'lastFinishEpochSeconds',
    firstArrivalSinceT0: 'firstArrivalSinceT0Seconds',
    lastFinishSinceT0: 'lastFinishSinceT0Seconds',
    interTokenLatency: 'interTokenLatencySeconds',
  }),
  ...under('metrics/tokens', { totalInput: 'totalInputTokens', totalOutput: 'totalOutputTokens', totalCached: 'totalCachedTokens' }),
  ...under('metrics/latencies', LATENCY_COLUMNS),
  ...under('metrics/offeredLoad', {
    targetRate: 'targetRequestsPerSecond',
    scheduledRate: 'scheduledRequestsPerSecond',
    achievedRate: 'achievedRequestsPerSecond',
    sendLag: 'sendLagSeconds',
  }),
  ...Object.keys(CONCURRENCY_STAGES).flatMap(stageConcurrency),
  ...under('metrics/routing/nodes/*', {
    ttft: 'ttftSeconds',
    totalLatency: 'totalLatencySeconds',
    queueTimeInServer: 'queueTimeInServerSeconds',
    pureQueueTime: 'pureQueueTimeSeconds',
  }),
  ...under('metrics/events/*', { time: 'timeEpochSeconds', timeSinceT0: 'timeSinceT0Seconds' }),
  ...windowLoad('metrics/events/*/before'),
  ...windowLoad('metrics/events/*/after'),
  ...harnessMeasurements('extras/harness'),
];

/** Maps whose keys are data, not names (format-1 paths): copied as they are. */
const OPAQUE_PATHS: readonly string[] = [
  'metrics/counts/failedByClass',
  'metrics/dataQuality/removedFields',
  'metrics/harness/stages_flagged',
  'metrics/harness/nodes_flagged',
  // Keyed by column name; each bound's own names are camelCase already.
  'metrics/harness/errorBounds',
];

/** One direction of the mapping: full path (in the names read) → the name written, and the paths copied as they are. */
interface Direction {
  names: ReadonlyMap<string, string>;
  opaque: ReadonlySet<string>;
}

function pathOf(parent: string, key: string): string {
  return parent === '' ? key : `${parent}/${key}`;
}

/** Renames the keys of `value` at their paths (in the direction's own names), recursively. */
function renameKeys(value: unknown, path: string, direction: Direction): unknown {
  if (Array.isArray(value)) return value.map((item) => renameKeys(item, pathOf(path, '*'), direction));
  if (value === null || typeof value !== 'object' || direction.opaque.has(path)) return value;
  const renamed: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    renamed[direction.names.get(pathOf(path, key)) ?? key] = renameKeys(item, pathOf(path, key), direction);
  }
  return renamed;
}

/** The format-2 path of a format-1 path: each segment renamed as its own prefix is. */
function translatePath(path: string, names: ReadonlyMap<string, string>): string {
  const segments = path.split('/');
  return segments.map((segment, index) => names.get(segments.slice(0, index + 1).join('/')) ?? segment).join('/');
}

const TO_V2: Direction = {
  names: new Map(SUMMARY_RENAMES.map((rename) => [rename.path, rename.name])),
  opaque: new Set(OPAQUE_PATHS),
};

const FROM_V2: Direction = {
  names: new Map(SUMMARY_RENAMES.map((rename) => [translatePath(rename.path, TO_V2.names), rename.path.split('/').at(-1) ?? rename.path])),
  opaque: new Set(OPAQUE_PATHS.map((path) => translatePath(path, TO_V2.names))),
};

/** A summary file with format 1's names (the in-memory shape) in format 2's names. */
export function toFormat2Names(file: object): Record<string, unknown> {
  return renameKeys(file, '', TO_V2) as Record<string, unknown>;
}

/** A summary file with format 2's names back in format 1's names (the in-memory shape). */
export function fromFormat2Names(file: object): Record<string, unknown> {
  return renameKeys(file, '', FROM_V2) as Record<string, unknown>;
}

/** The v1 → v2 path pairs, as docs/metrics.md's table lists them (`*` for array items and map keys). */
export function summaryRenameTable(): Array<{ v1: string; v2: string }> {
  return SUMMARY_RENAMES.map((rename) => ({ v1: rename.path, v2: translatePath(rename.path, TO_V2.names) }));
}
