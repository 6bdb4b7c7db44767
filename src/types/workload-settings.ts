/**
 * Settings that choose a workload: how requests arrive and what they ask for. Field names follow the framework's
 * configuration (README.md) so a resolved config object can be passed as is.
 */

/** Arrival process names; an unknown name is loaded as a module path. */
export type ArrivalProcessName = 'poisson' | 'gamma' | 'constant' | 'trace';

/**
 * How poisson and gamma schedules are drawn. `conditioned` (default): N−1 i.i.d. gaps rescaled so the schedule spans
 * exactly (N−1) / requestRate, so the scheduled rate is the target; `independent`: i.i.d. gaps summed as they come
 * (SGLang's bench_serving), whose rate misses the target by sampling chance (about ±1/sqrt(N)).
 */
export type ArrivalDraw = 'conditioned' | 'independent';

export interface ArrivalSettings {
  process: ArrivalProcessName | (string & {});
  /** Mean arrival rate in requests per second; `Infinity` sends every request at offset 0. */
  requestRate: number;
  /** Gamma only: the shape of the inter-arrival gaps. 1 = Poisson, smaller = burstier (CV = 1/sqrt(burstiness)). */
  burstiness?: number;
  /** Poisson and gamma only: `conditioned` (default) or `independent`; see ArrivalDraw. */
  draw?: ArrivalDraw;
  /** Trace only: a file of arrival timestamps (one number a line, or JSONL rows with `timestamp`). */
  tracePath?: string;
  /** Trace only: multiplies every gap of the trace (2 = half the rate, 0.5 = twice the rate). Default 1. */
  traceTimeScale?: number;
  /**
   * A rate that changes over time: stages run one after another and `requestRate` is ignored. The process keeps its
   * shape (Poisson, gamma with its burstiness, or constant) in time rescaled by the changing rate. After the last
   * stage, arrivals continue at its final rate until every request has arrived.
   */
  stages?: RateStage[];
}

export interface RateStage {
  durationS: number;
  /** Requests per second at the end of the stage (and throughout it, unless it ramps). */
  rate: number;
  /** `linear`: the rate moves evenly from the previous stage's rate (0 before the first) to `rate`. Default `step`. */
  ramp?: 'step' | 'linear';
}

/** Dataset names; an unknown name is loaded as a module path. */
export type DatasetName = 'random' | 'random-ids' | 'sharegpt' | 'shared-prefix' | 'custom';

export interface DatasetSettings {
  datasetName: DatasetName | (string & {});
  /** A local file (ShareGPT JSON, custom JSONL). Nothing is ever downloaded. */
  datasetPath?: string;
  /** How many requests to produce (shared-prefix: groups × prompts per group instead, as SGLang does). */
  numPrompts: number;
  /**
   * A local `tokenizer.json` (the model's, Hugging Face tokenizers format). When set, `random` and `shared-prefix` build
   * text prompts of exactly the drawn token counts for this tokenizer, and `sharegpt` / `custom` count prompt and
   * answer tokens with it instead of counting words. Nothing is ever downloaded.
   */
  tokenizerPath?: string;
  /** random / random-ids: the longest prompt, in tokens. */
  randomInputLen?: number;
  /** random / random-ids: the longest output, in tokens. */
  randomOutputLen?: number;
  /** random / random-ids: lengths are uniform integers in [max(floor(len × ratio), 1), len]. Default 0 (as SGLang). */
  randomRangeRatio?: number;
  /** random-ids: token ids are drawn from [0, vocabSize). Default 32000, below every common model's vocabulary. */
  randomIdsVocabSize?: number;
  /** sharegpt: a fixed output length for every request instead of the answer's length. */
  sharegptOutputLen?: number;
  /** sharegpt: drop pairs whose prompt + output exceed this many tokens. */
  sharegptContextLen?: number;
  /** shared-prefix: number of system-prompt groups (SGLang default 64). */
  gspNumGroups?: number;
  /** shared-prefix: questions per group (SGLang default 16). */
  gspPromptsPerGroup?: number;
  /** shared-prefix: system prompt tokens (SGLang default 2048). */
  gspSystemPromptLen?: number;
  /** shared-prefix: question tokens (SGLang default 128). */
  gspQuestionLen?: number;
  /** shared-prefix: output tokens (SGLang default 256). */
  gspOutputLen?: number;
  /** shared-prefix: lengths uniform in [ratio × len, len] like `random`; default 1 (exact lengths, SGLang's default). */
  gspRangeRatio?: number;
  /**
   * shared-prefix: when set, requests draw their group from a Zipf distribution with this exponent (popular groups
   * repeat) instead of SGLang's equal groups; `numPrompts` requests are then produced.
   */
  gspZipfExponent?: number;
  /** shared-prefix: turns per conversation (SGLang's --gsp-num-turns, default 1). */
  gspNumTurns?: number;
  /** shared-prefix: `uniform` (each group gets gspPromptsPerGroup requests) or `zipf` (SGLang's --gsp-group-distribution). */
  gspGroupDistribution?: 'uniform' | 'zipf';
  /** shared-prefix: the Zipf alpha with `zipf` (SGLang's --gsp-zipf-alpha; group 0 is the hottest). */
  gspZipfAlpha?: number;
  /** shared-prefix: tag each request with its group's routing key, sent as X-SMG-Routing-Key. */
  gspSendRoutingKey?: boolean;
  /** shared-prefix: keep the generated order (SGLang's --gsp-ordered). */
  gspOrdered?: boolean;
  /** mooncake: rounds per session (SGLang's --mooncake-num-rounds, default 1). */
  mooncakeNumRounds?: number;
}
