import { describe, expect, test } from 'vitest';
import type { StepPlan } from '../../src/engine/core/sim-engine.js';
import { DECODE_LOG_INTERVAL, SglangMetrics } from '../../src/engine/metrics/sglang-metrics.js';
import type { EngineLoad } from '../../src/types/engine.js';

function gauge(text: string, name: string): number {
  const match = new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text);
  if (match === null) throw new Error(`${name} missing`);
  return Number(match[1]);
}

const load = (running: number, waiting: number, used: number): EngineLoad => ({
  runningRequests: running,
  waitingRequests: waiting,
  waitingTokens: 0,
  waitingUncachedTokens: 0,
  usedTokens: used,
  evictableTokens: 0,
  maxTotalTokens: 1000,
  tokenUsage: used / 1000,
});

function plan(kind: 'prefill' | 'decode', startMs: number, batchSize: number, newPromptTokens = 0, newCachedTokens = 0): StepPlan {
  return {
    kind,
    startMs,
    durationMs: 10,
    batchSize,
    mixedDecodeSequences: 0,
    newRequests: kind === 'prefill' ? batchSize : 0,
    newPromptTokens,
    newCachedTokens,
    work: { prefillTokens: 0, prefillAttentionPairs: 0, decodeSequences: 0, decodeKvTokens: 0 },
  };
}

describe('SglangMetrics update rhythm', () => {
  test('gauges move after each prefill batch and every 40 decode steps, like SGLang\'s scheduler logs', () => {
    const metrics = new SglangMetrics('m');
    metrics.onStepCompleted(plan('prefill', 0, 4, 400, 100), load(4, 2, 400), 10, 0);
    let text = metrics.render();
    expect(gauge(text, 'sglang:num_running_reqs')).toBe(4);
    expect(gauge(text, 'sglang:num_queue_reqs')).toBe(2);
    expect(gauge(text, 'sglang:cache_hit_rate')).toBeCloseTo(0.25, 9);
    expect(gauge(text, 'sglang:token_usage')).toBeCloseTo(0.4, 9);
    for (let step = 0; step < DECODE_LOG_INTERVAL - 1; step++) {
      metrics.onStepCompleted(plan('decode', 10 + step * 10, 4), load(3, 0, 500), 20 + step * 10, 0);
    }
    text = metrics.render();
    // Not yet a decode log point: the gauges still show the prefill's values.
    expect(gauge(text, 'sglang:gen_throughput')).toBe(0);
    expect(gauge(text, 'sglang:num_running_reqs')).toBe(4);
    metrics.onStepCompleted(plan('decode', 400, 4), load(3, 0, 500), 410, 0);
    text = metrics.render();
    // 40 steps x 4 tokens over 400 ms.
    expect(gauge(text, 'sglang:gen_throughput')).toBeCloseTo(400, 6);
    expect(gauge(text, 'sglang:num_running_reqs')).toBe(3);
    // 2026 SGLang: a decode log resets the hit rate to 0.
    expect(gauge(text, 'sglang:cache_hit_rate')).toBe(0);
  });

  test('num_retracted_reqs counts retractions since the previous log point; cached tokens carry cache_source', () => {
    const metrics = new SglangMetrics('m');
    metrics.onStepCompleted(plan('prefill', 0, 2, 100, 0), load(2, 0, 100), 10, 3);
    expect(gauge(metrics.render(), 'sglang:num_retracted_reqs')).toBe(3);
    metrics.onStepCompleted(plan('prefill', 10, 2, 100, 0), load(2, 0, 100), 20, 5);
    expect(gauge(metrics.render(), 'sglang:num_retracted_reqs')).toBe(2);
    expect(metrics.render()).not.toMatch(/^sglang:cached_tokens_total\{/m);
    metrics.observeFinished(1, 100, 10, 40, false);
    expect(metrics.render()).toContain('sglang:cached_tokens_total{model_name="m",engine_type="unified",cache_source="device"} 40.0');
  });

  test('histograms render cumulative buckets with +Inf, sum and count', () => {
    const metrics = new SglangMetrics('m');
    metrics.observeFirstToken(0.15);
    metrics.observeFirstToken(3);
    const text = metrics.render();
    expect(text).toContain('sglang:time_to_first_token_seconds_bucket{model_name="m",engine_type="unified",le="0.2"} 1');
    expect(text).toContain('sglang:time_to_first_token_seconds_bucket{model_name="m",engine_type="unified",le="4.0"} 2');
    expect(text).toContain('sglang:time_to_first_token_seconds_bucket{model_name="m",engine_type="unified",le="+Inf"} 2');
    expect(text).toContain('sglang:time_to_first_token_seconds_count{model_name="m",engine_type="unified"} 2');
    expect(text).toMatch(/sglang:time_to_first_token_seconds_sum\{model_name="m",engine_type="unified"\} 3\.15/);
  });
});
