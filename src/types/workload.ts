/** One request of a workload, before it is sent. */
export interface WorkloadRequest {
  /** Position in the dataset after sampling (0-based). */
  datasetIndex: number;
  /** A text prompt. Exactly one of `prompt`, `inputIds` and `messages` is set. */
  prompt?: string;
  /** Exact token ids (the `random-ids` dataset), sent as `input_ids`. */
  /**
   * Token ids. Generated prompts hold them in a typed array (2 or 4 bytes an id, not 8): a million 512-token prompts
   * would otherwise take 4 GB. Clients send them as a JSON array either way.
   */
  inputIds?: number[] | Uint16Array | Uint32Array;
  /** Chat messages, for chat-completions workloads. */
  messages?: { role: 'system' | 'user' | 'assistant'; content: string }[];
  /** Intended prompt length in tokens. */
  inputLength: number;
  /** Requested output length in tokens (`max_new_tokens`). */
  outputLength: number;
  /** Shared-prefix workloads: the prefix group. */
  prefixGroup?: number;
  /** Multi-turn workloads: the session. */
  sessionId?: string;
  /** Sent as the `X-SMG-Routing-Key` header (SGLang's benchmark with --gsp-send-routing-key; smg routes on it). */
  routingKey?: string;
  /**
   * Custom datasets: the arrival time the file gave this request, in seconds on the file's own axis (only differences
   * matter). `scheduleFromRequestTimestamps` turns these into an arrival schedule.
   */
  timestampS?: number;
}

/** Sampling settings every request of a run shares. */
export interface SamplingSettings {
  temperature: number;
  /** Keep generating past end-of-sequence so that output lengths are exact (benchmarks want this). */
  ignoreEos: boolean;
}
