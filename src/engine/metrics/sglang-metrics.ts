import type { EngineLoad } from '../../types/engine.js';
import type { Milliseconds, Seconds } from '../../types/time.js';
import type { StepPlan } from '../core/sim-engine.js';
import { PrometheusHistogram } from './prometheus-histogram.js';

/**
 * SGLang's /metrics as the simulator exposes it (names, labels and buckets from 2026 SGLang's
 * python/sglang/srt/observability/metrics_collector.py and scheduler_metrics_mixin.py).
 *
 * Rhythm, like SGLang's scheduler: the gauges are not computed at scrape time; they are refreshed after every prefill
 * batch (num_running_reqs, num_queue_reqs, token_usage, cache_hit_rate of that batch) and every `decodeLogInterval`
 * decode steps (the same plus gen_throughput over the interval; a decode log sets cache_hit_rate to 0, as SGLang's
 * does), so a scrape sees the values of the last log point. num_retracted_reqs counts the retractions since the
 * previous log point, not since start.
 */
export const DECODE_LOG_INTERVAL = 40;

const TTFT_BUCKETS = [
  0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400,
] as const;
const E2E_BUCKETS = [
  0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400,
] as const;
const QUEUE_TIME_BUCKETS = [
  0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900,
  1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000,
] as const;
const ITL_BUCKETS = [
  0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2,
  4, 6, 8,
] as const;

export class SglangMetrics {
  readonly #schedulerLabels: string;
  readonly #tokenizerLabels: string;
  readonly #decodeLogInterval: number;
  readonly #timeToFirstToken = new PrometheusHistogram(
    'sglang:time_to_first_token_seconds',
    'Histogram of time to first token in seconds.',
    TTFT_BUCKETS,
  );
  readonly #e2eLatency = new PrometheusHistogram(
    'sglang:e2e_request_latency_seconds',
    'Histogram of End-to-end request latency in seconds',
    E2E_BUCKETS,
  );
  readonly #interTokenLatency = new PrometheusHistogram(
    'sglang:inter_token_latency_seconds',
    'Histogram of inter-token latency in seconds.',
    ITL_BUCKETS,
  );
  readonly #queueTime = new PrometheusHistogram(
    'sglang:queue_time_seconds',
    'Histogram of queueing time in seconds.',
    QUEUE_TIME_BUCKETS,
  );

  #numRunningRequests = 0;
  #numQueueRequests = 0;
  #tokenUsage = 0;
  #numUsedTokens = 0;
  #cacheHitRate = 0;
  #genThroughput = 0;
  #numRetractedRequests = 0;
  /** The engine's retraction total at the last log point. */
  #retractionsAtLastLog = 0;
  #decodeStepsSinceLog = 0;
  #tokensSinceLog = 0;
  #lastDecodeLogMs: Milliseconds = Number.NaN;

  #promptTokensTotal = 0;
  #generationTokensTotal = 0;
  #cachedTokensTotal = 0;
  #requestsTotal = 0;
  #abortedRequestsTotal = 0;

  constructor(servedModelName: string, decodeLogInterval = DECODE_LOG_INTERVAL) {
    const model = servedModelName.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    // Label names and order as SGLang's collectors declare them (prometheus_client keeps declaration order).
    this.#schedulerLabels = `model_name="${model}",engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"`;
    this.#tokenizerLabels = `model_name="${model}",engine_type="unified"`;
    this.#decodeLogInterval = decodeLogInterval;
  }

  /** Called by the driver after each completed step with the engine's load at that moment. */
  /**
   * A PD server's queue gauges, under SGLang's names (python/sglang/srt/managers/scheduler_metrics_mixin.py sets them
   * from its disaggregation queues when it logs stats): num_prefill_bootstrap_queue_reqs and
   * num_prefill_inflight_queue_reqs on a prefill server, num_decode_prealloc_queue_reqs and
   * num_decode_transfer_queue_reqs on a decode server. Read at scrape time, unlike the gauges above: these queues
   * change without any step (a decode server whose requests all wait for their KV runs none).
   */
  pdQueues: (() => Record<string, number>) | undefined = undefined;

  onStepCompleted(plan: StepPlan, load: EngineLoad, endMs: Milliseconds, retractions: number): void {
    if (plan.kind === 'prefill') {
      this.#setLoadGauges(load);
      const input = plan.newPromptTokens;
      this.#cacheHitRate = input > 0 ? plan.newCachedTokens / input : 0;
      this.#logRetractions(retractions);
      if (Number.isNaN(this.#lastDecodeLogMs)) this.#lastDecodeLogMs = endMs;
      return;
    }
    this.#tokensSinceLog += plan.batchSize;
    this.#decodeStepsSinceLog++;
    if (Number.isNaN(this.#lastDecodeLogMs)) this.#lastDecodeLogMs = plan.startMs;
    if (this.#decodeStepsSinceLog >= this.#decodeLogInterval) {
      const elapsedMs = endMs - this.#lastDecodeLogMs;
      this.#genThroughput = elapsedMs > 0 ? (this.#tokensSinceLog * 1000) / elapsedMs : 0;
      this.#setLoadGauges(load);
      this.#cacheHitRate = 0;
      this.#logRetractions(retractions);
      this.#decodeStepsSinceLog = 0;
      this.#tokensSinceLog = 0;
      this.#lastDecodeLogMs = endMs;
    }
  }

  /** When the engine goes idle SGLang logs nothing more; its gauges keep their last values except the counts. */
  onIdle(load: EngineLoad): void {
    this.#setLoadGauges(load);
  }

  /** The logged throughput and hit rate, which SGLang's `/v1/loads` reports beside the live counts. */
  get loggedRates(): { genThroughput: number; cacheHitRate: number } {
    return { genThroughput: this.#genThroughput, cacheHitRate: this.#cacheHitRate };
  }

  observeQueueTime(seconds: Seconds): void {
    this.#queueTime.observe(seconds);
  }

  observeFirstToken(seconds: Seconds): void {
    this.#timeToFirstToken.observe(seconds);
  }

  observeInterToken(seconds: Seconds): void {
    this.#interTokenLatency.observe(seconds);
  }

  observeFinished(e2eSeconds: Seconds, promptTokens: number, completionTokens: number, cachedTokens: number, aborted: boolean): void {
    this.#e2eLatency.observe(e2eSeconds);
    this.#promptTokensTotal += promptTokens;
    this.#generationTokensTotal += completionTokens;
    this.#cachedTokensTotal += cachedTokens;
    this.#requestsTotal++;
    if (aborted) this.#abortedRequestsTotal++;
  }

  #logRetractions(total: number): void {
    this.#numRetractedRequests = total - this.#retractionsAtLastLog;
    this.#retractionsAtLastLog = total;
  }

  #setLoadGauges(load: EngineLoad): void {
    this.#numRunningRequests = load.runningRequests;
    this.#numQueueRequests = load.waitingRequests;
    this.#tokenUsage = load.tokenUsage;
    this.#numUsedTokens = load.usedTokens;
  }

  render(): string {
    const s = this.#schedulerLabels;
    const t = this.#tokenizerLabels;
    const gauge = (name: string, help: string, value: number): string =>
      `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name}{${s}} ${formatValue(value)}`;
    const counter = (name: string, help: string, value: number): string =>
      `# HELP ${name} ${help}\n# TYPE ${name} counter\n${name}{${t}} ${formatValue(value)}`;
    return (
      [
        gauge('sglang:num_running_reqs', 'The number of running requests.', this.#numRunningRequests),
        gauge('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', this.#numQueueRequests),
        gauge('sglang:num_used_tokens', 'The number of used tokens.', this.#numUsedTokens),
        gauge('sglang:token_usage', 'The token usage.', this.#tokenUsage),
        gauge('sglang:gen_throughput', 'The generation throughput (token/s).', this.#genThroughput),
        gauge('sglang:cache_hit_rate', 'The prefix cache hit rate.', this.#cacheHitRate),
        gauge('sglang:num_retracted_reqs', 'The number of retracted requests.', this.#numRetractedRequests),
        this.#queueTime.render(s),
        counter('sglang:prompt_tokens_total', 'Number of prefill tokens processed.', this.#promptTokensTotal),
        counter('sglang:generation_tokens_total', 'Number of generation tokens processed.', this.#generationTokensTotal),
        // One series per cache source, created at its first cached token; the simulator's cache is all on the device.
        this.#cachedTokensTotal > 0
          ? `# HELP sglang:cached_tokens_total Number of cached prompt tokens by source (device/host/storage).\n# TYPE sglang:cached_tokens_total counter\nsglang:cached_tokens_total{${t},cache_source="device"} ${formatValue(this.#cachedTokensTotal)}`
          : '# HELP sglang:cached_tokens_total Number of cached prompt tokens by source (device/host/storage).\n# TYPE sglang:cached_tokens_total counter',
        counter('sglang:num_requests_total', 'Number of requests processed.', this.#requestsTotal),
        counter('sglang:num_aborted_requests_total', 'Number of requests aborted.', this.#abortedRequestsTotal),
        this.#timeToFirstToken.render(t),
        this.#interTokenLatency.render(t),
        this.#e2eLatency.render(t),
        ...Object.entries(this.pdQueues?.() ?? {}).map(([name, value]) => gauge(`sglang:${name}`, pdGaugeHelp(name), value)),
      ].join('\n') + '\n'
    );
  }
}

function pdGaugeHelp(name: string): string {
  if (name === 'kv_transfer_latency_ms') return 'The latency of the last KV transfer (ms).';
  if (name === 'kv_transfer_speed_gb_s') return 'The speed of the last KV transfer (GB/s).';
  return `The number of requests in the PD ${name.replace(/^num_|_reqs$/g, '').replace(/_/g, ' ')}.`;
}

function formatValue(value: number): string {
  return Number.isInteger(value) ? `${value}.0` : String(value);
}
