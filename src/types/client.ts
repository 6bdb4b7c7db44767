import type { Clock } from './clock.js';
import type { ClientOutcome } from './record.js';
import type { Milliseconds } from './time.js';
import type { SamplingSettings, WorkloadRequest } from './workload.js';

/** One request as a protocol client sends it. */
export interface ClientRequest {
  /** Set as `rid` in `/generate` bodies and as the `x-request-id` header on every protocol. */
  requestId: string;
  workload: WorkloadRequest;
  /** Aborting records the request as `aborted` (the run was interrupted). */
  signal?: AbortSignal;
}

/** Deadlines a client enforces; each has its own error class. Absent means no deadline. */
export interface ClientTimeouts {
  connectMs?: Milliseconds;
  firstByteMs?: Milliseconds;
  /**
   * Longest allowed wait for progress: between two events of a stream (comments and partial lines do not count), or
   * two pieces of a non-streamed body.
   */
  idleMs?: Milliseconds;
  /**
   * A request's whole life, from the hand-over to the pool. `'by-size'` gives each request a deadline from its own
   * prompt and output lengths (src/clients/common/total-deadline.ts), the default of the tests' settings.
   */
  totalMs?: Milliseconds | 'by-size';
}

/**
 * Size caps on what a server may send, so that no answer can exhaust the client's memory. Past a cap the request fails
 * as `malformed_stream`. Absent fields take the defaults (DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SSE_EVENT_BYTES).
 */
export interface ClientLimits {
  /** The most bytes of a non-streamed 2xx body. */
  maxBodyBytes?: number;
  /** The most bytes of one server-sent event (a single line included). */
  maxSseEventBytes?: number;
  /**
   * The most bytes of answers the client holds at once, all requests in flight together (default 1 GiB). Past it the
   * request that would pass it fails as `harness_limit`. Each client worker thread has its own.
   */
  maxInFlightBodyBytes?: number;
}

export interface ProtocolClientOptions {
  /** Base URL of the system under test: the server (node test) or the router (routing test). */
  baseUrl: string;
  /** Stream tokens (SSE) or wait for the whole answer. */
  stream: boolean;
  sampling: SamplingSettings;
  /** Model name for OpenAI-compatible protocols. */
  model?: string;
  /**
   * OpenAI-compatible protocols: send `rid` and ask for `continuous_usage_stats` (SGLang's and vLLM's extensions;
   * default true). False sends plain OpenAI requests, for servers that refuse unknown fields.
   */
  openaiExtensions?: boolean;
  /** Sent as `Authorization: Bearer`; never written to any output. */
  apiKey?: string;
  timeouts?: ClientTimeouts;
  limits?: ClientLimits;
  /** Upper bound on concurrent connections to `baseUrl`. */
  maxConnections?: number;
  /**
   * HTTP implementation: `socket` (servelab's lean HTTP/1.1 client, the default for `http://`) or `undici` (the
   * default for `https://`, and a fallback should a server need more of HTTP than the lean client speaks).
   */
  httpTransport?: 'socket' | 'undici';
  clock: Clock;
}

/**
 * Sends one request and measures it. Never throws for a failed request: a failure is an outcome with
 * `success: false` and an error class.
 */
export interface ProtocolClient {
  readonly protocol: string;
  send(request: ClientRequest): Promise<ClientOutcome>;
  close(): Promise<void>;
}

export type ProtocolClientFactory = (options: ProtocolClientOptions) => ProtocolClient;
