import type { EpochSeconds, Seconds } from './time.js';

/**
 * Why a request failed. Stable strings: they are written to `requests.csv` and read by analysis scripts.
 * - `connect_refused`: nothing listened at the address (or the connection was reset before any answer).
 * - `connect_timeout`, `first_byte_timeout`, `idle_timeout`, `total_timeout`: a client deadline passed.
 * - `http_4xx`, `http_5xx`: the server answered with that status class.
 * - `stream_truncated`: the stream ended before a final chunk (no finish_reason and no `[DONE]`).
 * - `malformed_stream`: a chunk could not be parsed as the protocol says.
 * - `server_error`: the server sent an error event inside a 200 stream.
 * - `aborted`: the run was interrupted while the request was in flight.
 * - `harness_limit`: servelab's own limit, not the server's fault: the client process ran out of file descriptors
 *   (EMFILE, ENFILE) or memory (ENOMEM, ENOBUFS, or its in-flight body budget).
 * - `protocol_error`: the answer broke HTTP/1.1: no status line, a status outside 100-599, both Content-Length and
 *   chunked framing, a content encoding the client did not ask for, an invalid chunk.
 * - `http_3xx`: a redirect; the client does not follow redirects (point it at the final address).
 * - `network_error`: any other transport failure.
 */
export type ErrorClass =
  | 'connect_refused'
  | 'connect_timeout'
  | 'first_byte_timeout'
  | 'idle_timeout'
  | 'total_timeout'
  | 'timeout'
  | 'http_4xx'
  | 'http_5xx'
  | 'stream_truncated'
  | 'malformed_stream'
  | 'server_error'
  | 'aborted'
  | 'harness_limit'
  | 'protocol_error'
  | 'http_3xx'
  | 'network_error';

/**
 * What a protocol client measured for one request. Every field but `success` may be absent: a missing source is an
 * empty cell, never a guess.
 */
export interface ClientOutcome {
  /** First byte of the request written to the system under test (client clock). */
  arrivalTime?: EpochSeconds;
  /** First chunk carrying generated tokens received (client clock). */
  firstTokenTime?: EpochSeconds;
  /** Final chunk (finish_reason set) received, or the whole body for non-streaming requests (client clock). */
  finishTime?: EpochSeconds;

  /**
   * Fields a server reported that could not be true and were left empty, as `field:reason` entries joined by `;`
   * (reasons: outside_run, negative_duration, impossible_count, impossible_value, backward_count); see
   * src/analysis/data-quality.ts. Absent when nothing was removed. On the outcome because a client screens too: a
   * stream whose token count went backwards (token-timeline.ts).
   */
  dataQuality?: string;

  // Prefill/decode disaggregation: a PD request's phases (docs/metrics.md, "PD phases"). Absent outside a PD run. The
  // simulated decode server reports them on its /generate answer (meta_info.servelab_pd_phases); real SGLang has no such key.
  /** Seconds the request waited on the prefill server before its forward began (bootstrap queue and waiting queue). */
  prefillQueueTime?: Seconds;
  /** Seconds of the prefill forward that computed its KV cache (from the start of its first prefill step to the end of its last). */
  prefillForwardTime?: Seconds;
  /** Seconds the KV cache took to move from the prefill to the decode server: the link's latency plus its bytes at the share of bandwidth it got. */
  kvTransferTime?: Seconds;
  /** Seconds on the decode server from the end of the transfer to the request joining the running batch. */
  decodeQueueTime?: Seconds;
  /**
   * Seconds the decode server held KV reserved for the request before its KV arrived (from the end of its
   * preallocation to the transfer's end): overlaps the prefill phases, so it is not a term of TTFT.
   */
  kvTransferWaitTime?: Seconds;

  /** SGLang `meta_info.request_received_ts` (server clock). */
  serverCreatedTime?: EpochSeconds;
  /**
   * Seconds of routerSendTime → serverCreatedTime during which the server was stopped (a `hang` failure event, until
   * its `restore`): the request waited in the stopped server's socket, and the server stamped its receipt on resuming.
   * Not measured: analysis derives it from the run's events (server-stalls.ts), and network_time leaves it out.
   */
  serverStallSeconds?: Seconds;
  /** `forward_entry_time - queue_time` (server clock). */
  queueTimeStart?: EpochSeconds;
  /** SGLang `forward_entry_time` (server clock). */
  queueTimeEnd?: EpochSeconds;
  /** SGLang `prefill_finished_time`, else the first chunk's `response_sent_to_client_ts` (server clock). */
  serverFirstTokenTime?: EpochSeconds;
  /**
   * When SGLang's API server finished handing the request to the scheduler: `api_server_dispatch_finish_ts` (2026),
   * else `request_sent_to_scheduler_ts` (2025 releases). From `serverCreatedTime` to here is the dispatch stage
   * (tokenizing and the hand-over), before the scheduler's queue (server clock).
   */
  serverDispatchTime?: EpochSeconds;
  /**
   * SGLang `response_sent_to_client_ts`: for a streamed request, when the server sent its first event; for a
   * non-streamed one, when it sent the answer (server clock).
   */
  serverResponseSentTime?: EpochSeconds;
  /** When the server finished the request: `request_finished_ts` (2026), else `decode_finished_ts` (2025) (server clock). */
  serverFinishTime?: EpochSeconds;
  /** SGLang `prefill_waiting_latency`: from forward entry to the start of its prefill batch, in seconds (scheduler). */
  prefillWaitingLatency?: Seconds;
  /** SGLang `prefill_launch_latency`: how long its prefill batch ran, in seconds (scheduler). */
  prefillLaunchLatency?: Seconds;
  /** SGLang `decode_throughput`: output tokens per second of decode, as the server computed it. */
  decodeThroughputTokensPerSecond?: number;

  actualPromptTokens?: number;
  actualOutputTokens?: number;
  cachedTokens?: number;
  numRetractions?: number;
  /** `finish_reason.type` as the server gave it: `length`, `stop`, `abort`. */
  finishReason?: string;

  /**
   * Inter-token latencies in seconds: each gap between consecutive chunks, spread evenly over the tokens that chunk
   * added (the change in `completion_tokens`), as SGLang's bench_serving does.
   */
  interTokenLatencies?: Seconds[];

  success: boolean;
  error?: ErrorClass;
  /** A human-readable explanation of the error (first 300 characters). */
  errorMessage?: string;
  httpStatus?: number;
  /**
   * The status code a server gave inside a 200 stream for a request it failed: SGLang's abort event
   * (`finish_reason.status_code`) or an OpenAI-compatible error chunk (`error.code`).
   */
  serverStatusCode?: number;
}

/**
 * One request's whole lifecycle, across load generator, client, router, tap and server (docs/metrics.md).
 * Times are epoch seconds; derived columns are computed by the analysis layer, not stored here.
 */
export interface RequestRecord extends ClientOutcome {
  /** The id the client sets: `rid` in a `/generate` body and the `x-request-id` header. */
  requestId: string;
  /** Position in the workload (0-based), the `dataset_index` column. */
  datasetIndex: number;
  /** Warmup requests are sent first and are excluded from metrics and files. */
  warmup: boolean;
  /** Shared-prefix workloads: which prefix group the prompt belongs to. */
  prefixGroup?: number;
  /** Multi-turn workloads: which session the request belongs to. */
  sessionId?: string;

  /** Intended prompt tokens. */
  inputLength: number;
  /** `max_new_tokens`. */
  expectedOutputLength: number;

  /** When the arrival process says the request arrives. */
  scheduledTime: EpochSeconds;
  /**
   * When the load generator handed the request to the client. Later than `scheduledTime` when the generator fell
   * behind or `maxConcurrency` held the request back; `arrivalTime - scheduledTime` (send lag) includes both.
   */
  dispatchTime?: EpochSeconds;
  /** True when the request had to wait for a free slot under `maxConcurrency` before it could be sent. */
  heldForConcurrency?: boolean;
  /** When the router forwarded the request to a server (tracing tap); equals `arrivalTime` in a node test. */
  routerSendTime?: EpochSeconds;
  /** Which server served it (tracing tap, or the server's URL in a node test). */
  host?: string;
  /**
   * The machine `host` ran on by name (a Slurm node: `SLURMD_NODENAME`), set by the orchestration from where it placed
   * that server; absent when the servers ran on the host that ran servelab, or `host` is not one of them.
   */
  hostNode?: string;
  /** How many times the router retried the request on another worker, when the router tells. */
  retries?: number;
  /**
   * Output tokens as a tracing source counted them, for the first users' `output_tokens_from_trace` column: SGLang's
   * request log (`completion_tokens`) where it was joined. Absent where no tracing source counts tokens (the taps
   * do not), never a copy of the client's count.
   */
  outputTokensFromTrace?: number;

  // Prefill/decode disaggregation (docs/routing.md, "Prefill/decode disaggregation"). All absent outside a PD run: a
  // co-located request has no second server and no transfer, and an empty cell says so rather than a zero.
  /** The prefill server of a PD request (the router's choice); `host` stays the server that answered (the decode one). */
  prefillHost?: string;
  /** The decode server of a PD request (the router's choice). */
  decodeHost?: string;
  /**
   * The bootstrap room the router injected into both legs (SGLang's `bootstrap_room`, a random 63-bit integer), as
   * decimal text: a double cannot hold every 63-bit integer, and the room is the key both servers' logs are joined on.
   */
  bootstrapRoom?: string;
  // The PD phase times (prefillQueueTime ... kvTransferWaitTime) are on ClientOutcome: a client reads them off the answer.
}
