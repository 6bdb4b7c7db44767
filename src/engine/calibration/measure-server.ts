import { systemClock } from '../../clock/clock.js';
import type { Clock } from '../../clock/clock.js';
import { ServelabError } from '../../errors/servelab-error.js';
import type { ProfileScheduling, ServingLatency } from '../../types/engine.js';
import { identifyScheduling, schedulingOf, schedulingPromptTokens } from './identify-scheduling.js';
import { SeededRandom } from '../../utils/random.js';
import { flushCache, readLimits, type ServerLimits, streamGenerate, type StreamResult } from './calibration-client.js';
import { decodeObservation, mixedObservation, prefillObservation } from './fit-profile.js';
import type { StepObservation } from './fit-profile.js';
import { repeatsDisagree, robustMedian } from './robust-statistics.js';
import { batchPointTokens, type CalibrationForecast, CONCURRENCY_PROMPT_TOKENS, forecastCalibrationMs, type MixedPoint, mixedSweepPoints, powersOfTwo, prefillSweepLengths } from './sweep-plan.js';
import { decodedTogether, lastPrefilledSpanMs, mixedSample, type MixedSample, stepTimes } from './answer-timings.js';
import { servingLatencyFromSamples } from '../profile/path-distribution.js';

export interface CalibrationOptions {
  /** Base URL of an SGLang server (or a servelab sim-server). */
  url: string;
  /**
   * The client's clock for its own request times (serving latency, the no-metrics fallback). Default: the system
   * clock. Tests pass a ManualClock so the client-side figures are exact rather than this machine's speed.
   */
  clock?: Clock;
  /** Tokens generated per request (ignore_eos); decode steps are measured over the last decodeTokens - 1. */
  decodeTokens?: number;
  /** Prompt lengths of the batch-1 sweep; default powers of two from 64 up to the chunked-prefill size, with points just above and half-way between them. */
  promptLengths?: number[];
  /** Batch sizes of the concurrency sweep; default powers of two up to max_running_requests (at most 512). */
  batchSizes?: number[];
  /**
   * Prompt lengths of the concurrency sweep, which set the KV tokens its decode steps read; default 32, 128, 256, 512.
   * More lengths place the table's KV points closer together (and the sweep takes longer in proportion).
   */
  concurrencyPromptLengths?: number[];
  /** Repetitions of every point (the median of the repeats within 3.5 MADs of their median is kept). */
  repeats?: number;
  /**
   * Mixed steps: a prompt sent while a batch decodes (default on). On an engine that mixes prefill into the running
   * batch (SGLang --enable-mixed-chunk, transformers' continuous batching) its step is a mixed step, whose cost the
   * prefill and decode sweeps cannot tell; on one that does not, it is a prefill step alone.
   */
  mixedSweep?: boolean;
  /**
   * Probe how the server schedules (default on): whether prefill chunks share steps with decoding
   * (identify-scheduling.ts). A few seconds; its verdict and the server's limits go into the profile's `scheduling`.
   */
  identifyScheduling?: boolean;
  seed?: number;
  /** Deadline for one request, ms. */
  requestTimeoutMs?: number;
  onProgress?: (message: string) => void;
}

export type { ServerLimits } from './calibration-client.js';

export interface CalibrationMeasurements {
  limits: ServerLimits;
  observations: StepObservation[];
  /** Whether step times came from the server's --enable-metrics timestamps (exact) or client-side chunk times. */
  usedServerTimestamps: boolean;
  /** Repeated samples of a point that lay too far from the others and were left out, over all points. */
  rejectedSamples: number;
  /** Third repeats taken because a point's two repeats disagreed by 1.3x or more (absent in files from before). */
  settlingRepeats?: number;
  /** Prompt lengths of the concurrency sweep, ascending (absent in files from before they could be chosen). */
  concurrencyPromptLengths?: number[];
  /** The duration forecast before the sweep began, and what it took (ms). */
  estimatedMs: number;
  elapsedMs: number;
  /** The forecast per part (scheduling probe, batch-1, concurrency and mixed sweeps) and what each took (ms); absent in files from before. */
  forecastByPartMs?: CalibrationForecast;
  elapsedByPartMs?: Record<string, number>;
  /**
   * Medians over the path probe and the batch-1 sweep (an idle server, one request at a time; with their quantiles
   * where enough were timed, path-distribution.ts): ingress = forward_entry_time - request_received_ts; delivery = the
   * client's request time less the server's request_received_ts to request_finished_ts. Absent without server timestamps.
   */
  servingLatency?: ServingLatency;
  /** How the server schedules (absent when not probed, and in files from before it was). */
  scheduling?: ProfileScheduling;
}

/**
 * Measures a server for calibration: an input-length sweep at batch 1 (one prefill step per request, then decode at
 * batch 1), a concurrency sweep (B requests at once at several prompt lengths, four by default, run twice with K more tokens
 * the second time: the K extra steps all run at batch B) and a mixed sweep. Prompts are random token ids so nothing
 * hits the prefix cache; the cache is flushed between points when the server allows it.
 */
export async function measureServer(options: CalibrationOptions): Promise<CalibrationMeasurements> {
  const baseUrl = options.url.replace(/\/+$/, '');
  const decodeTokens = options.decodeTokens ?? 16;
  if (decodeTokens < 3) throw new ServelabError('INVALID_CONFIG', 'decodeTokens must be at least 3 to time decode steps');
  const concurrencyPromptLengths = options.concurrencyPromptLengths ?? CONCURRENCY_PROMPT_TOKENS;
  if (concurrencyPromptLengths.length === 0 || concurrencyPromptLengths.some((length) => !Number.isInteger(length) || length < 1)) {
    throw new ServelabError('INVALID_CONFIG', `concurrency prompt lengths must be whole numbers of tokens >= 1, got [${concurrencyPromptLengths.join(', ')}]`);
  }
  const repeats = options.repeats ?? 2;
  const random = new SeededRandom(options.seed ?? 1);
  const progress = options.onProgress ?? ((): void => {});
  const limits = await readLimits(baseUrl);
  const observations: StepObservation[] = [];
  let serverTimestamps = true;
  const timeoutMs = options.requestTimeoutMs ?? 120_000;
  const prompt = (length: number): number[] => Array.from({ length }, () => random.integer(100, 30_000));
  // Streams are needed only for client-side timing. Once the server shows its timestamps, ask for whole answers:
  // hundreds of concurrent streams would cost the server (and a simulated server sharing this process) CPU time.
  const clock = options.clock ?? systemClock;
  const startedMs = clock.nowMs();
  const probe = stepTimes(await streamGenerate(baseUrl, clock, prompt(16), decodeTokens, timeoutMs, true));
  const stream = !probe.fromServer;
  let rejectedSamples = 0;
  const generate = (ids: number[], maxNewTokens: number): Promise<StreamResult> =>
    streamGenerate(baseUrl, clock, ids, maxNewTokens, timeoutMs, stream);

  const chunkLimit = limits.chunkedPrefillSize > 0 ? limits.chunkedPrefillSize : 8192;
  const longestPrompt = Math.min(chunkLimit, limits.contextLength - decodeTokens - 8, Math.floor(limits.maxTotalTokens / 2));
  const promptLengths = options.promptLengths ?? prefillSweepLengths(Math.min(longestPrompt, 8192));
  // Up to the server's own limit: a table used past the batch sizes it measured had predicted a collapse the engine
  // never had (bench/real-engine/README.md), so the sweep reaches max_running_requests itself, not only a power of two.
  const batchSizes = options.batchSizes ?? [...new Set([...powersOfTwo(2, Math.min(limits.maxRunningRequests, 512)), Math.min(limits.maxRunningRequests, 512)])].filter((batch) => batch >= 2);
  const sweptPromptLengths = [...new Set(concurrencyPromptLengths)].sort((a, b) => a - b);
  const concurrencyPoints = sweptPromptLengths.flatMap((promptTokens) =>
    batchSizes
      .filter((batch) => batch * (promptTokens + 2 * (batchPointTokens(batch, promptTokens, chunkLimit, decodeTokens).prefillSteps + decodeTokens + 2)) <= limits.maxTotalTokens * 0.7)
      .map((batch) => ({ promptTokens, batch })),
  );
  const mixedPoints = options.mixedSweep === false ? [] : mixedSweepPoints(batchSizes, limits, chunkLimit, decodeTokens, promptLengths.filter((length) => length <= chunkLimit));
  /** `batch` requests at once, each generating `tokens`; null unless all of them were decoding together at some time. */
  const runBatch = async (batch: number, promptTokens: number, tokens: number): Promise<StreamResult[] | null> => {
    await flushCache(baseUrl);
    const results = await Promise.all(Array.from({ length: batch }, () => generate(prompt(promptTokens), tokens)));
    const timings = results.map(stepTimes);
    serverTimestamps &&= timings.every((timing) => timing.fromServer);
    return decodedTogether(results) ? results : null;
  };
  /**
   * One mixed step: `batch` requests of `promptTokens` start decoding (streamed, so their first tokens show when all
   * are running), then a probe prompt of `probeTokens` arrives; its prefill step (server timestamps) is the step that
   * also decoded the batch. Null when the batch did not decode all through the probe's prefill.
   */
  const measureMixedStep = async (point: MixedPoint, runTokens: number): Promise<MixedSample | null> => {
    let started = 0;
    let allStarted = (): void => {};
    const running = new Promise<void>((resolve) => {
      allStarted = resolve;
    });
    const onFirstEvent = (): void => {
      started++;
      if (started === point.batch) allStarted();
    };
    const memberEventTimesMs = Array.from({ length: point.batch }, (): number[] => []);
    const members = Promise.all(
      memberEventTimesMs.map((eventTimesMs) => streamGenerate(baseUrl, clock, prompt(point.promptTokens), runTokens, timeoutMs, true, onFirstEvent, eventTimesMs)),
    );
    await Promise.race([running, members]);
    // Two decode steps, so that the last member's first token has left the engine and the batch is decoding.
    await new Promise((resolve) => setTimeout(resolve, 2 * Math.max(warmProbe.decodeStepMs, 1)));
    const probe = await generate(prompt(point.probeTokens), 2);
    return mixedSample(await members, probe, point.promptTokens, memberEventTimesMs);
  };
  // The first request to a fresh server often pays one-off costs (kernel compilation, CUDA graph capture): forecast
  // from a second one, with a timed flush before it and a prompt of one chunk after it for the prefill's cost per token.
  const flushStartedMs = clock.nowMs();
  await flushCache(baseUrl);
  const flushMs = clock.nowMs() - flushStartedMs;
  const warmAnswer = await generate(prompt(16), decodeTokens);
  const warmProbe = stepTimes(warmAnswer);
  // The longest prompt the sweep itself sends, not the context's limit: a prompt at the limit can count a few tokens over
  // it once the server adds its own (a 400 from the sim at 8,191 + 2 of 8,192), and the sweep never sends one.
  const longProbeTokens = Math.max(17, Math.min(chunkLimit, longestPrompt, Math.max(...promptLengths)));
  const longAnswer = await generate(prompt(longProbeTokens), 2);
  const longProbe = stepTimes(longAnswer);
  // The round trip is what a request's wall time has beyond its steps; the smaller of the two probes' (one request on a
  // busy host can stall tens of ms, which the forecast would then charge to each of hundreds of requests).
  const overheadsMs = [
    warmAnswer.lastEventMs - warmAnswer.sentMs - warmProbe.prefillMs - (decodeTokens - 1) * warmProbe.decodeStepMs,
    longAnswer.lastEventMs - longAnswer.sentMs - longProbe.prefillMs - longProbe.decodeStepMs,
  ].filter((value) => Number.isFinite(value));
  const requestOverheadMs = overheadsMs.length === 0 ? 0 : Math.max(0, Math.min(...overheadsMs));
  const forecast = forecastCalibrationMs(
    {
      prefillMs: warmProbe.prefillMs,
      prefillPerTokenMs: Number.isFinite(longProbe.prefillMs) ? Math.max(0, (longProbe.prefillMs - warmProbe.prefillMs) / (longProbeTokens - 16)) : 0,
      decodeStepMs: warmProbe.decodeStepMs,
      requestOverheadMs,
      flushMs,
    },
    {
      decodeTokens,
      repeats,
      chunkLimit,
      promptLengths,
      concurrencyPoints,
      mixedPoints,
      schedulingPromptTokens: options.identifyScheduling === false ? null : schedulingPromptTokens(limits),
    },
  );
  const estimatedMs = forecast.totalMs;
  progress(
    `calibration will take about ${Math.ceil(estimatedMs / 1000)} s: ${promptLengths.length} prompt lengths, ` +
      `${concurrencyPoints.length} batch points and ${mixedPoints.length} mixed steps, ${repeats} repeat${repeats === 1 ? '' : 's'} each ` +
      `${options.identifyScheduling === false ? '' : '(and a scheduling probe first) '}` +
      `(forecast from probe requests: ${warmProbe.prefillMs.toFixed(1)} ms prefill at 16 tokens, ${longProbe.prefillMs.toFixed(1)} ms at ${longProbeTokens}, ` +
      `${warmProbe.decodeStepMs.toFixed(2)} ms per decode step, ${requestOverheadMs.toFixed(1)} ms a request beyond its steps)`,
  );
  const phaseStartedMs: Partial<Record<keyof Omit<CalibrationForecast, 'totalMs'>, number>> = {};
  const elapsedByPhaseMs: Record<string, number> = {};
  let currentPhase: keyof Omit<CalibrationForecast, 'totalMs'> | undefined;
  /** Closes the phase under way and opens the next: each part's time beside its forecast, to see which one misses. */
  const enterPhase = (phase: keyof Omit<CalibrationForecast, 'totalMs'> | undefined): void => {
    const nowMs = clock.nowMs();
    if (currentPhase !== undefined) elapsedByPhaseMs[currentPhase] = nowMs - (phaseStartedMs[currentPhase] as number);
    currentPhase = phase;
    if (phase !== undefined) phaseStartedMs[phase] = nowMs;
  };
  enterPhase('schedulingMs');
  let scheduling: ProfileScheduling | undefined;
  if (options.identifyScheduling !== false) {
    const identified = await identifyScheduling({ baseUrl, clock, limits, prompt, decodeStepMs: warmProbe.decodeStepMs, timeoutMs });
    scheduling = schedulingOf(limits, identified);
    progress(`scheduling: ${identified.mixedChunk === null ? 'unknown' : identified.mixedChunk ? 'mixed (prefill chunks share steps with decoding)' : 'prefill apart from decoding'}; ${identified.evidence}`);
  }
  // Two repeats that disagree get a third (see repeatsDisagree): true when a point needs it, counted and said.
  let settlingRepeats = 0;
  const settle = (...series: (readonly number[])[]): boolean => {
    if (!series.some(repeatsDisagree)) return false;
    settlingRepeats++;
    return true;
  };
  enterPhase('batchOneMs');
  const ingressSamplesMs: number[] = [];
  const deliverySamplesMs: number[] = [];
  // The path's spread needs more requests than the sweep's few: short ones, one at a time on the idle server (a
  // prefill step each). Not the concurrency sweep's: a batch's requests finish in one step and wait for each other's
  // answers, which put the sim server's path at 4.45 ms median against 1.76 in a run at 0.2x of its capacity.
  const pathSamplesMs = await measurePath(PATH_PROBE_REQUESTS, () => generate(prompt(16), 1));
  ingressSamplesMs.push(...pathSamplesMs.ingressMs);
  deliverySamplesMs.push(...pathSamplesMs.deliveryMs);
  for (const length of promptLengths) {
    const prefillMs: number[] = [];
    const decodeMs: number[] = [];
    for (let repeat = 0; repeat < repeats || (repeat === repeats && settle(prefillMs, decodeMs)); repeat++) {
      await flushCache(baseUrl);
      const result = await generate(prompt(length), decodeTokens);
      const received = result.meta['request_received_ts'];
      const forward = result.meta['forward_entry_time'];
      const finished = result.meta['request_finished_ts'];
      if (typeof received === 'number' && typeof forward === 'number' && typeof finished === 'number') {
        ingressSamplesMs.push((forward - received) * 1000);
        deliverySamplesMs.push(deliverySampleMs(result) as number);
      }
      const timing = stepTimes(result);
      serverTimestamps &&= timing.fromServer;
      prefillMs.push(timing.prefillMs);
      decodeMs.push(timing.decodeStepMs);
    }
    const prefill = robustMedian(prefillMs);
    const decode = robustMedian(decodeMs);
    rejectedSamples += prefill.rejected + decode.rejected;
    observations.push({ ...prefillObservation(length, prefill.value), samplesMs: prefillMs });
    observations.push({ ...decodeObservation(1, length + decodeTokens / 2, decode.value), samplesMs: decodeMs });
    progress(`prefill ${length} tokens: ${prefill.value.toFixed(2)} ms; decode at batch 1: ${decode.value.toFixed(2)} ms/step`);
  }

  enterPhase('concurrencyMs');
  for (const { promptTokens, batch } of concurrencyPoints) {
    const samplesMs: number[] = [];
    const { prefillSteps, shortTokens: firstShortTokens, extraTokens } = batchPointTokens(batch, promptTokens, chunkLimit, decodeTokens);
    // Doubled when a run's batch never decoded all together, for the rest of this point.
    let shortTokens = firstShortTokens;
    for (let repeat = 0; repeat < repeats || (repeat === repeats && settle(samplesMs)); repeat++) {
      // Timing each request's whole decode span measures a shrinking batch whenever prefilling the batch takes more
      // steps than a request decodes (the first ones finish before the last one starts). So the batch runs twice, each
      // request generating N and then N + K tokens, N enough that all B decode together for a while: the K extra
      // tokens lengthen only that full-batch stretch. The requests prefilled last are timed, because their decode spans
      // hold no other request's prefill step: how many of those a span holds varies with how the requests arrived.
      let stepMs: number | null = null;
      for (let attempt = 0; attempt < 2 && stepMs === null; attempt++) {
        const short = await runBatch(batch, promptTokens, shortTokens);
        const long = short === null ? null : await runBatch(batch, promptTokens, shortTokens + extraTokens);
        if (short !== null && long !== null) stepMs = (lastPrefilledSpanMs(long) - lastPrefilledSpanMs(short)) / extraTokens;
        else shortTokens *= 2;
      }
      if (stepMs === null || !(stepMs > 0)) {
        progress(`batch ${batch} at ${promptTokens}-token prompts: a repeat left out (the batch never decoded all together)`);
        continue;
      }
      samplesMs.push(stepMs);
    }
    if (samplesMs.length === 0) continue;
    const step = robustMedian(samplesMs);
    rejectedSamples += step.rejected;
    // The extra steps come once the first-prefilled request has N tokens and the last one about N - prefillSteps.
    const meanKvPerSequence = promptTokens + shortTokens - prefillSteps / 2 + extraTokens / 2;
    observations.push({ ...decodeObservation(batch, meanKvPerSequence, step.value), samplesMs });
    progress(`decode batch ${batch} at ${promptTokens}-token prompts: ${step.value.toFixed(2)} ms/step`);
  }
  enterPhase('mixedMs');
  for (const point of mixedPoints) {
    const samples: MixedSample[] = [];
    for (let repeat = 0; repeat < repeats || (repeat === repeats && settle(samples.map((sample) => sample.stepMs))); repeat++) {
      let sample: MixedSample | null = null;
      for (let attempt = 0; attempt < 2 && sample === null; attempt++) {
        await flushCache(baseUrl);
        sample = await measureMixedStep(point, point.runTokens * 2 ** attempt);
      }
      if (sample === null) {
        progress(`mixed step at batch ${point.batch}: a repeat left out (the batch never decoded all through the probe's prefill)`);
        continue;
      }
      serverTimestamps &&= sample.fromServer;
      samples.push(sample);
    }
    if (samples.length === 0) continue;
    const step = robustMedian(samples.map((sample) => sample.stepMs));
    rejectedSamples += step.rejected;
    const kvTokens = samples.reduce((sum, sample) => sum + sample.kvTokens, 0) / samples.length;
    const between = samples.map((sample) => sample.betweenStepsMs).filter((value): value is number => value !== undefined);
    observations.push({
      ...mixedObservation(point.batch, kvTokens, point.probeTokens, step.value),
      samplesMs: samples.map((sample) => sample.stepMs),
      ...(between.length === 0 ? {} : { betweenStepsMs: robustMedian(between).value }),
    });
    progress(
      `mixed: prefill ${point.probeTokens} tokens beside decode batch ${point.batch} at ${point.promptTokens}-token prompts: ${step.value.toFixed(2)} ms`,
    );
  }
  enterPhase(undefined);
  return {
    limits,
    observations,
    usedServerTimestamps: serverTimestamps,
    rejectedSamples,
    settlingRepeats,
    concurrencyPromptLengths: sweptPromptLengths,
    estimatedMs,
    elapsedMs: clock.nowMs() - startedMs,
    forecastByPartMs: forecast,
    elapsedByPartMs: elapsedByPhaseMs,
    ...(scheduling === undefined ? {} : { scheduling }),
    ...(ingressSamplesMs.length === 0
      ? {}
      : { servingLatency: servingLatencyFromSamples(ingressSamplesMs, deliverySamplesMs) }),
  };
}

/** Requests the path probe sends before the batch-1 sweep (a prefill step of 16 tokens and one token each). */
const PATH_PROBE_REQUESTS = 64;

/** `count` requests one after another: each one's ingress and delivery (those the server stamped). */
async function measurePath(count: number, send: () => Promise<StreamResult>): Promise<{ ingressMs: number[]; deliveryMs: number[] }> {
  const ingressMs: number[] = [];
  const deliveryMs: number[] = [];
  for (let index = 0; index < count; index++) {
    const result = await send();
    const received = result.meta['request_received_ts'];
    const forward = result.meta['forward_entry_time'];
    const delivery = deliverySampleMs(result);
    if (typeof received !== 'number' || typeof forward !== 'number' || delivery === null) return { ingressMs, deliveryMs };
    ingressMs.push((forward - received) * 1000);
    deliveryMs.push(delivery);
  }
  return { ingressMs, deliveryMs };
}

/** The client's time for a request beyond the server's request_received_ts to request_finished_ts; null without them. */
function deliverySampleMs(result: StreamResult): number | null {
  const received = result.meta['request_received_ts'];
  const finished = result.meta['request_finished_ts'];
  if (typeof received !== 'number' || typeof finished !== 'number') return null;
  return result.lastEventMs - result.sentMs - (finished - received) * 1000;
}
