import type { ServerLimits } from './calibration-client.js';

/**
 * The calibration sweeps' plan: which prompt lengths, batch sizes and mixed steps are measured, how many tokens each
 * request generates, and a forecast of how long it all takes. Pure arithmetic on the server's limits.
 */

const SHORT_PROMPT_TOKENS = 32;
const LONG_PROMPT_TOKENS = 512;
/**
 * Prompt lengths of the concurrency sweep: they set the KV tokens its decode steps read (at batch 64, about 5k, 11k,
 * 19k and 36k). Two would leave the table to interpolate straight across any jump between them, such as the
 * transformers engine's KV padding to 16,384-token buckets (41 ms at batch 32 and 10k KV tokens, 62 ms at 18k).
 */
export const CONCURRENCY_PROMPT_TOKENS = [SHORT_PROMPT_TOKENS, 128, 256, LONG_PROMPT_TOKENS];

/**
 * What the forecast knows of the server before the sweep, from its probes: a 16-token request and a long prompt (one
 * chunk) give the prefill step's fixed part and its cost per token; the 16-token request's wall time less its steps
 * gives the HTTP round trip; one timed cache flush the flush's.
 */
export interface ProbeCosts {
  /** Prefill step of a 16-token prompt (ms). */
  prefillMs: number;
  /** Prefill cost per prompt token beyond those 16 (ms), from the long probe; 0 when unknown. */
  prefillPerTokenMs: number;
  /** Decode step at batch 1 (ms). */
  decodeStepMs: number;
  /** A request's wall time less the server's steps (ms): HTTP, tokenizing, delivery. */
  requestOverheadMs: number;
  /** One /flush_cache round trip (ms). */
  flushMs: number;
}

/** What the calibration will run, as the forecast counts it. */
export interface CalibrationPlan {
  decodeTokens: number;
  repeats: number;
  chunkLimit: number;
  promptLengths: readonly number[];
  concurrencyPoints: readonly { promptTokens: number; batch: number }[];
  mixedPoints: readonly MixedPoint[];
  /** The scheduling probe's prompt (tokens), or null when it is not run. */
  schedulingPromptTokens: number | null;
}

/** The forecast per part of the calibration and in all (ms). */
export interface CalibrationForecast {
  schedulingMs: number;
  batchOneMs: number;
  concurrencyMs: number;
  mixedMs: number;
  totalMs: number;
}

/** Streams and probes of the scheduling probe (identify-scheduling.ts): 4 streams of 32-token prompts, 40 tokens each, beside 3 prompts. */
const SCHEDULING_STREAMS = 4;
const SCHEDULING_STREAM_TOKENS = 40;
const SCHEDULING_PROBES = 3;

/**
 * The calibration's duration from its probes (ms). Every request pays the round trip, every point a cache flush; a
 * prefill of T tokens runs in ⌈T / chunk⌉ steps, each the probe's fixed part, plus the per-token cost of all T; decode
 * steps are taken to grow by half per 64 sequences (a probe at batch 1 cannot tell how they grow; on the simulated
 * engine's default profile they do not, so batch points come out somewhat long). A point whose two repeats disagree
 * takes a third (settle in measure-server.ts), which no forecast can know: it is left out.
 */
export function forecastCalibrationMs(probe: ProbeCosts, plan: CalibrationPlan): CalibrationForecast {
  const floorPrefillMs = Math.max(probe.prefillMs, 0.1);
  const prefillMs = (tokens: number): number => {
    const steps = Math.max(1, Math.ceil(tokens / plan.chunkLimit));
    return steps * floorPrefillMs + Math.max(0, probe.prefillPerTokenMs) * Math.max(0, tokens - 16 * steps);
  };
  const stepMs = (batch: number): number => Math.max(probe.decodeStepMs, 0.1) * (1 + batch / 128);
  const request = (promptTokens: number, tokens: number, batch: number): number =>
    probe.requestOverheadMs + prefillMs(promptTokens) + Math.max(0, tokens - 1) * stepMs(batch);
  const batchOneMs = plan.repeats * plan.promptLengths.reduce((sum, length) => sum + probe.flushMs + request(length, plan.decodeTokens, 1), 0);
  const concurrencyMs =
    plan.repeats *
    plan.concurrencyPoints.reduce((sum, { promptTokens, batch }) => {
      const { shortTokens, extraTokens } = batchPointTokens(batch, promptTokens, plan.chunkLimit, plan.decodeTokens);
      const run = (tokens: number): number => probe.flushMs + request(promptTokens * batch, tokens, batch);
      return sum + run(shortTokens) + run(shortTokens + extraTokens);
    }, 0);
  // A mixed point: the batch prefills and decodes its run, and a probe prompt (two tokens) joins it two steps in.
  const mixedMs =
    plan.repeats *
    plan.mixedPoints.reduce(
      (sum, point) => sum + probe.flushMs + request(point.promptTokens * point.batch, point.runTokens, point.batch) + probe.requestOverheadMs + prefillMs(point.probeTokens),
      0,
    );
  const streams = (): number => request(32 * SCHEDULING_STREAMS, SCHEDULING_STREAM_TOKENS, SCHEDULING_STREAMS);
  const schedulingMs =
    plan.schedulingPromptTokens === null
      ? 0
      : SCHEDULING_PROBES * (streams() + probe.requestOverheadMs + prefillMs(plan.schedulingPromptTokens) + 6 * stepMs(SCHEDULING_STREAMS));
  return { schedulingMs, batchOneMs, concurrencyMs, mixedMs, totalMs: schedulingMs + batchOneMs + concurrencyMs + mixedMs };
}

/**
 * What a batch point asks of each request: the batch's prefill takes `prefillSteps` steps, so the first run generates
 * N = prefillSteps + 2 tokens (all B decode together for a while) and the second N + K.
 */
export function batchPointTokens(batch: number, promptTokens: number, chunkLimit: number, decodeTokens: number): { prefillSteps: number; shortTokens: number; extraTokens: number } {
  const prefillSteps = Math.ceil((batch * promptTokens) / chunkLimit);
  return { prefillSteps, shortTokens: prefillSteps + 2, extraTokens: Math.max(2 * decodeTokens, 32) };
}

export interface MixedPoint {
  batch: number;
  promptTokens: number;
  probeTokens: number;
  /** Tokens each batch member generates: enough to outlast the batch's own prefill and the probe's. */
  runTokens: number;
}

/**
 * The mixed sweep: one sequence, the concurrency sweep's largest batch (less one, below max_running_requests), half
 * and a quarter of it, at short and long prompts, each with probes of an eighth, a quarter and half a chunk and of the
 * chunk less the batch (so that probe and batch fit one step of a mixing engine). What mixing costs beyond its parts
 * can grow with the batch and with the prompt, and not in a straight line (measured-table-fit.ts, `mixingExcess`,
 * interpolates it over both): with two batch sizes and two probes, a sweep of bench/foreign-engine's law had priced
 * its mixed steps 9-23% cheap at one sequence or a 64-token prompt, where its runs at low load spend their mixed steps.
 */
export function mixedSweepPoints(
  batchSizes: readonly number[],
  limits: ServerLimits,
  chunkLimit: number,
  decodeTokens: number,
  prefillLengths: readonly number[] = [],
): MixedPoint[] {
  // The fractions of a chunk go to the nearest prompt length the prefill sweep measured, so that what a mixed step
  // costs beyond its parts is taken against a prefill step that was measured, not one interpolated across a gap (the
  // default lengths hold every power of two, so a power-of-two chunk's fractions are already among them).
  const nearestMeasured = (tokens: number): number =>
    prefillLengths.length === 0 ? tokens : prefillLengths.reduce((best, length) => (Math.abs(length - tokens) < Math.abs(best - tokens) ? length : best));
  // The probe must find a free seat: a batch of max_running_requests would keep it queued until a member finished.
  const largest = Math.min(Math.max(...batchSizes), limits.maxRunningRequests - 1);
  if (largest < 2) return [];
  const batches = [...new Set([1, Math.max(2, Math.floor(largest / 4)), Math.max(2, Math.floor(largest / 2)), largest])];
  const points: MixedPoint[] = [];
  for (const promptTokens of [SHORT_PROMPT_TOKENS, LONG_PROMPT_TOKENS]) {
    for (const batch of batches) {
      const runTokens = Math.ceil((batch * promptTokens) / chunkLimit) + 2 * decodeTokens;
      for (const probeTokens of [...new Set([...[8, 4, 2].map((part) => nearestMeasured(Math.floor(chunkLimit / part))), chunkLimit - batch])]) {
        if (probeTokens < 16) continue;
        // The probe asks 2 new tokens, and a server refuses (400) a prompt whose tokens and output pass its context.
        if (probeTokens + Math.max(decodeTokens, 2) + 8 > limits.contextLength) continue;
        if (batch * (promptTokens + 2 * runTokens + 8) + probeTokens > limits.maxTotalTokens * 0.7) continue;
        points.push({ batch, promptTokens, probeTokens, runTokens });
      }
    }
  }
  return points;
}

/**
 * Prompt lengths of the batch-1 sweep: powers of two from 64, and beside each from 128 on a point just above it and
 * one half-way to the next. Engines pad a step's tokens to captured or tuned shapes, so step time can jump just past a
 * power of two (the transformers engine of bench/real-engine steps from 47 to 63 ms between 512 and 544 tokens);
 * powers of two alone would interpolate straight across the jump.
 */
export function prefillSweepLengths(longest: number): number[] {
  const lengths = new Set<number>();
  for (const power of powersOfTwo(64, longest)) {
    lengths.add(power);
    if (power < 128) continue;
    for (const beside of [power + power / 16, power * 1.5]) if (beside <= longest) lengths.add(beside);
  }
  return [...lengths].sort((a, b) => a - b);
}

export function powersOfTwo(from: number, to: number): number[] {
  const values: number[] = [];
  for (let value = from; value <= to; value *= 2) values.push(value);
  return values;
}
