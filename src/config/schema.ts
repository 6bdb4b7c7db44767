import { z } from 'zod';
import { sloTargetsSchema } from './slo-targets.js';
import { slurmJobSettingsSchema } from './slurm-job-settings.js';
import { MAX_RESPONSE_CAP_BYTES } from './size-limits.js';

/**
 * The configuration of a test, named as the framework's first users named it (README.md). One schema validates the
 * library's config objects, `servelab run FILE` files and the command line's flags alike, so they cannot drift apart.
 */

const positiveInteger = z.number().int().positive();
const nonNegativeInteger = z.number().int().nonnegative();
/** A cap on what one answer may hold: above MAX_RESPONSE_CAP_BYTES it could not be held as one string at all. */
const responseCapBytes = positiveInteger.max(MAX_RESPONSE_CAP_BYTES, {
  message: `must be at most ${MAX_RESPONSE_CAP_BYTES} bytes (${MAX_RESPONSE_CAP_BYTES / 2 ** 20} MiB): one answer is read into one string, and V8's strings end near 512 MiB`,
});

/**
 * A request rate in requests per second; `Infinity` sends every request at once. zod's numbers exclude Infinity, so it
 * is allowed explicitly, also as the strings "inf" / "Infinity" (YAML `.inf` parses to Infinity; a run's config.json
 * stores it as the string "Infinity", which must read back).
 */
const requestRate = z.preprocess(
  (value) => (typeof value === 'string' && /^[+]?(inf|infinity)$/i.test(value.trim()) ? Infinity : value),
  z.union([z.literal(Infinity), z.number().positive({ message: 'must be a number above 0, or inf to send every request at once' })]),
);

/** A builtin target (sim, sglang, attach) or the path of a module that exports a target launcher (docs/placement.md). */
export const targetSchema = z.string().min(1);
export const protocolSchema = z.enum(['sglang', 'openai-completions', 'openai-chat']);
export const arrivalSchema = z.enum(['poisson', 'gamma', 'constant', 'trace']);
export const datasetNameSchema = z.enum(['sharegpt', 'random', 'random-ids', 'shared-prefix', 'custom', 'mooncake']);

export const serverSettingsSchema = z.object({
  /** Model weights for SGLang; for the simulator only a served name. */
  modelPath: z.string().min(1).optional(),
  /** GPU id (or ids, for tensor parallelism) the server is pinned to through CUDA_VISIBLE_DEVICES. */
  gpuId: z.union([nonNegativeInteger, z.array(nonNegativeInteger).min(1)]).default(0),
  tpSize: positiveInteger.default(1),
  maxRunningRequests: positiveInteger.optional(),
  maxTotalTokens: positiveInteger.optional(),
  memFractionStatic: z.number().gt(0).lt(1).optional(),
  chunkedPrefillSize: positiveInteger.optional(),
  schedulePolicy: z.string().min(1).optional(),
  scheduleConservativeness: z.number().positive().optional(),
  enableTorchCompile: z.boolean().default(false),
  quantization: z.string().min(1).optional(),
  disableRadixCache: z.boolean().default(false),
  /**
   * SGLang's --enable-mixed-chunk: prefill steps carry the running decode batch. Absent: off, except that the simulated
   * engine takes a calibrated profile's own scheduling (`scheduling.mixedChunk`).
   */
  enableMixedChunk: z.boolean().optional(),
  /**
   * KV tokens per page (SGLang's --page-size). Absent: SGLang's default (1), except that the simulated engine takes a
   * calibrated profile's own (`scheduling.pageSize`).
   */
  pageSize: positiveInteger.optional(),
  /** Port for a launched server; 0 or absent picks a free one. */
  port: z.number().int().min(0).max(65535).optional(),
  /** Extra arguments passed verbatim to the server command. */
  extraServerArgs: z.array(z.string()).default([]),
  /** Simulated engine cost profile: a built-in name or a JSON file. */
  profile: z.string().min(1).default('llama-3-8b-h100'),
  /** The Python interpreter that runs SGLang. */
  pythonExecutable: z.string().min(1).default('python'),
  /** How long a launched server may take to become ready. */
  readyTimeoutS: z.number().positive().optional(),
  /** sglang with --launcher slurm: nodes one server spans (SGLang's --nnodes); only its rank 0 serves HTTP. */
  nnodes: positiveInteger.optional(),
});

export const workloadSettingsSchema = z.object({
  requestRate: requestRate.default(Infinity),
  numPrompts: positiveInteger.default(1000),
  datasetName: datasetNameSchema.default('random'),
  datasetPath: z.string().min(1).optional(),
  randomInputLen: positiveInteger.default(1024),
  randomOutputLen: positiveInteger.default(1024),
  randomRangeRatio: z.number().min(0).max(1).default(0),
  sharegptOutputLen: positiveInteger.optional(),
  gspNumGroups: positiveInteger.default(64),
  gspPromptsPerGroup: positiveInteger.default(16),
  gspSystemPromptLen: positiveInteger.default(2048),
  gspQuestionLen: positiveInteger.default(128),
  gspOutputLen: positiveInteger.default(256),
  warmupRequests: nonNegativeInteger.default(1),
  seed: z.number().int().default(1),
  maxConcurrency: positiveInteger.optional(),
  arrival: arrivalSchema.default('poisson'),
  burstiness: z.number().positive({ message: 'must be above 0 (1 = Poisson, smaller = burstier)' }).default(1),
  /**
   * Poisson and gamma: `conditioned` rescales the drawn gaps so the schedule's rate is exactly requestRate;
   * `independent` sums i.i.d. gaps as SGLang's bench_serving does (its rate misses the target by chance).
   */
  arrivalDraw: z.enum(['conditioned', 'independent']).default('conditioned'),
  tracePath: z.string().min(1).optional(),
  traceTimeScale: z.number().positive().default(1),
  tokenizerPath: z.string().min(1).optional(),
  /** shared-prefix: draw each request's group from a Zipf distribution with this exponent (popular groups repeat). */
  gspZipfExponent: z.number().positive().optional(),
  /** shared-prefix (SGLang's newest flags): turns per conversation, the group distribution and its Zipf alpha. */
  gspNumTurns: positiveInteger.default(1),
  gspGroupDistribution: z.enum(['uniform', 'zipf']).default('uniform'),
  gspZipfAlpha: z.number().positive().finite().optional(),
  /** shared-prefix: send each group's key in the X-SMG-Routing-Key header (smg's consistent_hashing reads it). */
  gspSendRoutingKey: z.boolean().default(false),
  /** shared-prefix: keep the generated order instead of shuffling. */
  gspOrdered: z.boolean().default(false),
  /** mooncake: rounds per session (SGLang's --mooncake-num-rounds). */
  mooncakeNumRounds: positiveInteger.default(1),
  /** Closed loop: this many users, each sending its next request when its previous one finished. */
  concurrency: positiveInteger.optional(),
  /** Closed loop: a pause between a user's request finishing and its next one. */
  thinkTimeMs: z.number().nonnegative().optional(),
  /**
   * Load that changes over time: stages one after another, each `{durationS, rate}` (open loop) or
   * `{durationS, concurrency}` (closed loop), optionally `ramp: linear` from the previous stage's level.
   */
  stages: z
    .array(
      z
        .object({
          durationS: z.number().positive(),
          rate: z.number().positive().optional(),
          concurrency: nonNegativeInteger.optional(),
          ramp: z.enum(['step', 'linear']).default('step'),
        })
        .strict(),
    )
    .min(1)
    .optional(),
});

export const clientSettingsSchema = z.object({
  protocol: protocolSchema.default('sglang'),
  stream: z.boolean().default(true),
  temperature: z.number().min(0).default(0),
  ignoreEos: z.boolean().default(true),
  /**
   * OpenAI-compatible protocols: send the request id as `rid` and ask for `stream_options.continuous_usage_stats`
   * (SGLang and vLLM take both). Off for servers that refuse unknown fields, such as OpenAI's own API.
   */
  openaiExtensions: z.boolean().default(true),
  /** Model name sent on OpenAI-compatible protocols (defaults to modelPath). */
  model: z.string().min(1).optional(),
  /** Name of the environment variable holding an API key; the key itself is never stored. */
  apiKeyEnv: z.string().min(1).default('OPENAI_API_KEY'),
  /** Load generator threads (open loop): more than one spreads sending over cores when one core cannot keep up. */
  clientWorkers: positiveInteger.default(1),
  /**
   * Load-generator processes (open loop), started through the run's placement on its client nodes, sharing one
   * schedule and one start instant; 1 sends from this process (docs/load-generators.md).
   */
  clientNodes: positiveInteger.default(1),
  // Every request has deadlines by default, so no server can stall a run forever (docs/protocols.md, "Deadlines").
  connectTimeoutMs: z.number().positive().default(10_000),
  /** A non-streamed answer's headers come only when it is done, so this is as long as the longest expected answer. */
  firstByteTimeoutMs: z.number().positive().default(600_000),
  idleTimeoutMs: z.number().positive().default(600_000),
  /**
   * `by-size` (the default): each request's deadline follows its own lengths, 600 s + 1 ms per prompt token + 250 ms
   * per output token (src/clients/common/total-deadline.ts); a number gives every request that many milliseconds.
   */
  totalTimeoutMs: z.union([z.number().positive(), z.literal('by-size')], { message: 'must be a number of milliseconds above 0, or "by-size"' }).default('by-size'),
  /** How long one warmup request may take before it is recorded as failed and the run goes on. */
  warmupTimeoutMs: z.number().positive().default(120_000),
  /** Cap on a non-streamed answer's body; past it the request is `malformed_stream` (128 MiB). */
  maxBodyBytes: responseCapBytes.default(128 * 1024 * 1024),
  /** Cap on one server-sent event; past it the request is `malformed_stream` (32 MiB). */
  maxSseEventBytes: responseCapBytes.default(32 * 1024 * 1024),
  /** Cap on the bytes of answers held at once, all requests in flight together; past it a request is `harness_limit` (1 GiB). */
  maxInFlightBodyBytes: positiveInteger.default(2 ** 30),
  flushCache: z.boolean().default(false),
  /** The HTTP client under the protocol clients (ProtocolClientOptions.httpTransport); unset: socket for http://, undici for https://. */
  httpTransport: z.enum(['socket', 'undici']).optional(),
});


const TWIN_SENSITIVITY_RULE = 'must be auto, off, or a percentage above 0 and below 100 (the step error of the twin\'s sensitivity band)';
export const runSettingsSchema = z.object({
  target: targetSchema.default('sim'),
  /**
   * Where the launched servers and router run (docs/slurm.md): `local` (this host's process groups, the default) or
   * `slurm` (job steps in the Slurm allocation servelab runs in). Optional without a default, so a local run's
   * config.json is unchanged.
   */
  launcher: z.enum(['local', 'slurm']).optional(),
  /** slurm: servers per node (SGLang servers take their GPU ids per node); default: the servers spread over every node. */
  gpusPerNode: positiveInteger.optional(),
  /** attach: the server (node test) or the router (routing test). */
  url: z.string().url({ message: 'must be a URL such as http://127.0.0.1:30000' }).optional(),
  /**
   * attach: the directory an SGLang server started with `--export-metrics-to-file-dir` writes its request log to (or
   * one whose subdirectories hold each server's). Its lines are joined to the records and copied into the run.
   */
  serverRequestLogDir: z.string().min(1).optional(),
  /** The run directory itself; default `results/<run-id>`. */
  outputDir: z.string().min(1).optional(),
  resultsRoot: z.string().min(1).default('results'),
  runId: z
    .string()
    .regex(/^[A-Za-z0-9._=-]+$/, { message: 'may hold only letters, digits and . _ = -' })
    // `.` and `..` would make the run directory the results root itself or its parent.
    .refine((value) => value !== '.' && value !== '..', { message: 'may not be "." or ".."; give the run a name' })
    .optional(),
  /**
   * What a run does when a process it launched (a server, the router, the taps) dies: `continue` (its requests are
   * recorded as the failures they are) or `stop` (the run ends early, as an interrupt would). Either way the death is an
   * event on the run's time axis and a notice.
   */
  onProcessExit: z.enum(['continue', 'stop']).default('continue'),
  /** Run as a discrete-event simulation in virtual time (sim target only): no sockets, seconds for hours of load. */
  virtualTime: z.boolean().default(false),
  /**
   * Virtual time: the sensitivity band's step error in percent. `auto` takes the profile's own held-out step error (an
   * assumed 5% where it records none); `off` runs no band. The same workload is run again with every step 1 - e and
   * 1 + e times as long (src/orchestration/virtual-time/twin-sensitivity.ts).
   */
  twinSensitivity: z
    .union([z.literal('auto'), z.literal('off'), z.number().gt(0, { message: TWIN_SENSITIVITY_RULE }).lt(100, { message: TWIN_SENSITIVITY_RULE })], { message: TWIN_SENSITIVITY_RULE })
    .default('auto'),
  /** Live progress: `auto` draws a bar on a terminal and prints plain lines otherwise. */
  progress: z.enum(['auto', 'bar', 'lines', 'off']).default('auto'),
  /**
   * The disk server-metrics.csv may take per hour of run, all servers together, in MB (src/scrape/scrape-budget.ts):
   * the scrape interval backs off from 500 ms to stay under it. A routing study of many servers that wants every
   * scrape raises it; the 1 GB-a-run cap after which it grows by a tenth of the rate stays.
   */
  serverMetricsMbPerHour: z.number().positive().default(100),
  /** Print the terminal summary at the end. */
  quiet: z.boolean().default(false),
  /**
   * Estimate each server's clock offset from the requests' own instants and, where they prove the clocks disagree,
   * move server instants onto this host's clock in requests.csv, Parquet and the time series (requests.jsonl keeps the
   * raw values). Off: server instants are used as stamped, the estimate is still reported.
   */
  clockCorrection: z.boolean().default(true),
  /**
   * The harness grade: a metric is affected when servelab's own error bound on it (its processes' lateness) exceeds this
   * share of the metric's p50 (docs/metrics.md, "Harness").
   */
  harnessErrorShare: z.number().gt(0).max(1).default(0.05),
  /** Goodput objectives in ms; strict, so a misspelt objective is an error instead of a 100% goodput. */
  slo: sloTargetsSchema.optional(),
  /**
   * Run the test this many times, repeat k with seed + k − 1, each in its own directory `repeat-k/`, and state every
   * headline metric as an estimate with a 95% interval over them (docs/statistics.md).
   */
  repeats: positiveInteger.max(1000, { message: 'must be at most 1000' }).default(1),
});

/** The settings every test level shares: server, workload, client and run. */
const sharedTestSettingsSchema = serverSettingsSchema
  .extend(workloadSettingsSchema.shape)
  .extend(clientSettingsSchema.shape)
  .extend(runSettingsSchema.shape)
  .extend(slurmJobSettingsSchema.shape);

export const nodeTestConfigSchema = sharedTestSettingsSchema.strict();

/** What a user writes: every field optional where a default exists. */
export type NodeTestConfigInput = z.input<typeof nodeTestConfigSchema>;
/** The resolved configuration, defaults filled in; written to `config.json`. */
export type NodeTestConfig = z.output<typeof nodeTestConfigSchema>;

/** One action of a failure schedule (docs/metrics.md, Events), at a time in seconds after the run's start. */
export const failureActionSchema = z.object({
  atS: z.number().nonnegative(),
  action: z.enum(['crash', 'hang', 'drain', 'restore']),
  /** Node indices, from 0. `restore` with no nodes restores every failed node. */
  nodes: z.array(nonNegativeInteger).default([]),
})
  // Strict: a misspelt `nodes` would otherwise be dropped and the action would fail no node at all.
  .strict();

/**
 * The first users' form `{ "300": [1, 2], "600": [] }`: from each time on, exactly the listed nodes are failed
 * (crashed); a node absent from a later entry is restored. The list form says each action explicitly.
 */
export const failureScheduleSchema = z.union([
  z.record(z.string().regex(/^\d+(\.\d+)?$/, { message: 'keys are seconds after the start, e.g. "300"' }), z.array(nonNegativeInteger)),
  z.array(failureActionSchema),
]);

export const routerKindSchema = z.enum(['builtin', 'smg', 'sglang-router', 'nginx']);

export const routingSettingsSchema = z.object({
  /** Number of servers (one per GPU). */
  numGpus: positiveInteger.default(4),
  /** builtin: cache_aware, round_robin, random, power_of_two, shortest_queue, least_load, prefix_hash, consistent_hashing, or a module path; smg: any smg policy; nginx: round_robin or least_conn. */
  routingPolicy: z.string().min(1).default('cache_aware'),
  router: routerKindSchema.default('builtin'),
  /** First server port for sglang servers (server i listens on basePort + i). */
  basePort: z.number().int().min(1).max(65535).default(30001),
  /** Port of the router servelab starts (0: any free port). */
  routerPort: z.number().int().min(0).max(65535).default(0),
  /** Servers that already run, behind a router servelab starts (with --target attach). */
  workerUrls: z.array(z.string().url()).optional(),
  /** Put a tracing tap in front of each server to record router_send_time and host per request. */
  taps: z.boolean().default(true),
  /** Scrape each server's /metrics during the run. */
  collectPerNodeMetrics: z.boolean().default(true),
  /** Apply the failure schedule (default: whenever one is given). */
  enableNodeFailures: z.boolean().optional(),
  failureSchedule: failureScheduleSchema.optional(),
  /** builtin router: retries on another worker when a worker refuses the connection. */
  maxRetries: nonNegativeInteger.default(4),
  /** smg's or sglang-router's Prometheus port (they always open one; each router needs its own). */
  routerPrometheusPort: z.number().int().min(1).max(65535).optional(),
  /**
   * Prefill/decode disaggregation: `numPrefill` prefill servers and `numDecode` decode servers behind the builtin
   * router in PD mode (numGpus becomes their sum). Optional without defaults, so a co-located run's config is unchanged.
   */
  pdDisaggregation: z.boolean().optional(),
  /** PD: prefill servers (default 1). */
  numPrefill: positiveInteger.optional(),
  /** PD: decode servers (default 1). */
  numDecode: positiveInteger.optional(),
  /** PD: the policy choosing the prefill server (smg's --prefill-policy; default: routingPolicy). */
  prefillPolicy: z.string().min(1).optional(),
  /** PD: the policy choosing the decode server (smg's --decode-policy; default: routingPolicy). */
  decodePolicy: z.string().min(1).optional(),
  /** PD on the sim: the KV link's bandwidth as written (`25GB/s`, `200Gbit/s`); default: the profile's, else 25GB/s. */
  kvTransferBandwidth: z.string().min(1).optional(),
  /** PD on the sim: the fixed time each KV transfer adds (ms); default: the profile's, else 0.5. */
  kvTransferLatencyMs: z.number().finite().nonnegative().optional(),
  /**
   * PD, attach: prefill servers that already run, each `URL`, `URL,BOOTSTRAP_PORT` or `URL,none` (smg's
   * `--prefill URL [BOOTSTRAP_PORT|none]`; a URL alone has no bootstrap port, as in smg).
   */
  prefillUrls: z.array(z.string().min(1)).optional(),
  /** PD, attach: decode servers that already run. */
  decodeUrls: z.array(z.string().url({ message: 'must be a URL such as http://127.0.0.1:30000' })).optional(),
  /** PD, sglang: SGLang's --disaggregation-transfer-backend for every server (SGLang's default: mooncake). */
  disaggregationTransferBackend: z.string().min(1).optional(),
  /** PD, sglang: the first prefill server's --disaggregation-bootstrap-port; prefill server i takes this + i (default 8998, SGLang's). */
  disaggregationBootstrapPort: z.number().int().min(1).max(65535).optional(),
});

export const routingTestConfigSchema = sharedTestSettingsSchema.extend(routingSettingsSchema.shape).strict();

export type RoutingTestConfigInput = z.input<typeof routingTestConfigSchema>;
export type RoutingTestConfig = z.output<typeof routingTestConfigSchema>;
export type FailureAction = z.output<typeof failureActionSchema>;
