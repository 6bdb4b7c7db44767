import type { Clock } from '../../clock/clock.js';
import type { ProfileScheduling } from '../../types/engine.js';
import { type ServerLimits, type StreamResult, streamGenerate } from './calibration-client.js';
import { stepTimes } from './answer-timings.js';
import { median } from './robust-statistics.js';

/**
 * Identifies over HTTP alone whether a server runs prefill in steps of its own (SGLang's default) or mixes prefill
 * chunks into the steps that decode the running batch (SGLang with --enable-mixed-chunk, transformers' continuous
 * batching, vLLM V1). A few requests decode, streamed; a prompt arrives. Two readings, both about structure rather
 * than cost:
 *
 * - the running streams' stall (server timestamps): apart, the streams wait out the prompt's whole prefill step, so
 *   their decode spans grow by that step; mixed, the prompt's step also gave each stream a token, so their spans grow
 *   by that step less one decode step (the chunk's share). A span's growth is read against the same stream's own steps
 *   in the same probe, outside the prompt's window (see readSchedulingProbe).
 * - coincidence (client times, used where the server sends no timestamps): a step's tokens leave the engine together,
 *   so on a mixing server the running streams' tokens arrive with the prompt's first token; apart, the nearest is a
 *   step away. Client reads can merge events on a busy host, so this is the weaker reading.
 *
 * SGLang's scheduler: `get_next_batch_to_run` (python/sglang/srt/managers/scheduler.py) runs a new prefill batch
 * before the running batch; `ScheduleBatch.mix_with_running` (schedule_batch.py) joins them under --enable-mixed-chunk.
 */

/** One probe's reading: medians over the running streams. */
export interface SchedulingProbeSample {
  /** The streams' step before the prompt arrived (median gap between their tokens). */
  decodeGapMs: number;
  /** From the prompt's first token to the nearest token of a running stream. */
  nearestTokenMs: number;
  /** The streams' longest gap from the prompt's arrival to two steps after its first token. */
  stallMs: number;
  /** The prompt's prefill (server timestamps, else the client's time to its first token). */
  prefillMs: number;
  /**
   * Server timestamps: how much longer the streams' decode spans were than their own steps outside the prompt's window
   * account for, and that step (the mean of their gaps there).
   */
  serverStallMs?: number;
  serverDecodeStepMs?: number;
  /** Whether either scheduling explains the server-side stall (within half a decode step); when not, coincidence decides. */
  serverExplained?: boolean;
  /**
   * Set (a few words: why) when the server-side stall lies where no scheduling can put it: the spans came out shorter
   * than the streams' own steps add up to by more than half a decode step, or longer by more than twice the prompt's
   * step and a decode step. Such a probe's
   * measurement is broken (the engine's step time moved within the probe, a stream was preempted), not evidence:
   * it does not vote, and its stall is left out of the printed median.
   */
  unreadable?: string;
  /** Whether the streams' tokens arrived with the prompt's first token (the client-side reading). */
  coincided: boolean;
  /**
   * Whether this reading says the server mixes: the server-side reading where there is one, else coincidence (also
   * where the server-side stall is unreadable: shown, but that probe does not vote).
   */
  mixed: boolean;
}

/** Tokens of a running stream count as arriving with the prompt's first token within this share of a decode step. */
const COINCIDENCE_SHARE = 0.25;

/**
 * Reads one probe from the client instants of the running streams' events, the prompt's send and first-token instants
 * and its prefill time; null when the streams did not run through the probe (too few tokens before or after it).
 * `serverSpansMs`, where the server sends timestamps, are the streams' decode spans on its clock (first token to last),
 * in the order of `streamEventsMs`.
 */
export function readSchedulingProbe(
  streamEventsMs: readonly (readonly number[])[],
  promptSentMs: number,
  promptFirstTokenMs: number,
  prefillMs: number,
  serverSpansMs?: readonly number[],
): SchedulingProbeSample | null {
  const gaps: number[] = [];
  const nearest: number[] = [];
  const stalls: number[] = [];
  const growths: number[] = [];
  const steps: number[] = [];
  for (const [stream, events] of streamEventsMs.entries()) {
    const before = events.filter((at) => at < promptSentMs);
    if (before.length < 3 || (events[events.length - 1] as number) <= promptFirstTokenMs) return null;
    const baseline = median(before.slice(1).map((at, index) => at - (before[index] as number)));
    gaps.push(baseline);
    nearest.push(Math.min(...events.map((at) => Math.abs(at - promptFirstTokenMs))));
    let stall = 0;
    let outsideMs = 0;
    let outsideGaps = 0;
    for (let index = 1; index < events.length; index++) {
      const at = events[index] as number;
      const gapMs = at - (events[index - 1] as number);
      if (at > promptSentMs && at <= promptFirstTokenMs + 2 * baseline) stall = Math.max(stall, gapMs);
      // The steps the prompt can lengthen: the one that ends with its first token (mixed) or spans it (apart), and the
      // next. Not those while it waited to enter a step: transformers' steps swung to 93 ms as a prompt arrived and
      // before it entered one, which no scheduling of the prompt explains. A normal step inside counts for nothing.
      if (at <= promptFirstTokenMs - baseline / 2 || at > promptFirstTokenMs + 2 * baseline) {
        outsideMs += gapMs;
        outsideGaps++;
      }
    }
    stalls.push(stall);
    const spanMs = serverSpansMs?.[stream];
    if (spanMs !== undefined && outsideGaps > 0) {
      // The span's steps are priced at this stream's own step in this probe, outside the prompt's window: a span
      // measured in another run cannot stand in, as an engine's step time moves between runs (transformers without
      // CUDA graphs decoded 4 streams at 66 ms a step alone and at 26 ms in the probe after, which read the stall as
      // -1283 ms), and 40 steps' jitter on each side would swamp a one-step difference. The mean, not the median:
      // skewed step jitter puts the mean above the median, and the span sums the steps. The span covers as many steps
      // as the client's first-to-last events, so the event gaps count them, whatever tokens an event carries.
      const stepMs = outsideMs / outsideGaps;
      steps.push(stepMs);
      growths.push(spanMs - (events.length - 1) * stepMs);
    }
  }
  if (gaps.length === 0) return null;
  const decodeGapMs = median(gaps);
  const nearestTokenMs = median(nearest);
  const coincided = nearestTokenMs < COINCIDENCE_SHARE * decodeGapMs;
  const client = { decodeGapMs, nearestTokenMs, stallMs: median(stalls), prefillMs, coincided };
  if (growths.length === 0 || growths.length !== gaps.length) return { ...client, mixed: coincided };
  const serverStallMs = median(growths);
  const serverDecodeStepMs = median(steps);
  const server = { serverStallMs, serverDecodeStepMs };
  // Apart: stall = the prompt's step. Mixed: stall = the prompt's step less one decode step. Half-way between decides,
  // unless the stall lies more than half a decode step beyond both: then neither explains it (an engine whose step time
  // swings with how requests arrive, as transformers' without CUDA graphs: a 213 ms stall against a 136 ms prompt step
  // and a 120 ms decode step), and the client's reading decides.
  const halfStepMs = serverDecodeStepMs / 2;
  const lowestMs = prefillMs - serverDecodeStepMs - halfStepMs;
  const highestMs = prefillMs + halfStepMs;
  const unreadable = unreadableStall(serverStallMs, prefillMs, serverDecodeStepMs, Math.min(lowestMs, -halfStepMs));
  if (unreadable !== undefined) return { ...client, ...server, serverExplained: false, unreadable, mixed: coincided };
  const explained = serverStallMs >= lowestMs && serverStallMs <= highestMs;
  const mixed = explained ? serverStallMs < prefillMs - halfStepMs : coincided;
  return { ...client, ...server, serverExplained: explained, mixed };
}

/**
 * Why a stall no scheduling allows cannot be read, or undefined when it can: a stream cannot decode faster because a
 * prompt arrived (below `floorMs`: half a step's jitter below the least either scheduling allows), and a prompt's step
 * holds the streams up by that step at most (apart), so twice it and a decode step is no jitter of either reading.
 */
function unreadableStall(stallMs: number, prefillMs: number, decodeStepMs: number, floorMs: number): string | undefined {
  if (stallMs < floorMs) return `the streams' decode spans came out ${(-stallMs).toFixed(2)} ms shorter than their own steps add up to`;
  if (stallMs > 2 * prefillMs + decodeStepMs) {
    return `the streams' decode spans came out ${stallMs.toFixed(2)} ms longer than their own steps add up to, over twice the prompt's ${prefillMs.toFixed(2)} ms step and a decode step`;
  }
  return undefined;
}

export interface SchedulingProbeOptions {
  baseUrl: string;
  clock: Clock;
  limits: ServerLimits;
  /** Prompt ids of the given length (random, so nothing hits the prefix cache). */
  prompt: (length: number) => number[];
  /** A decode step at batch 1, from calibration's warm probe: how long to let the streams run before the prompt. */
  decodeStepMs: number;
  timeoutMs: number;
  /** Probes to run; the verdict is the majority (default 3). */
  probes?: number;
}

/** The verdict: null `mixedChunk` when no probe could be read (a server of one running request, say). */
export interface IdentifiedScheduling {
  mixedChunk: boolean | null;
  samples: SchedulingProbeSample[];
  evidence: string;
}

/** The probe's prompt: half a chunk (the streams' decode tokens count against the chunk on a mixing server), within the server's room. */
export function schedulingPromptTokens(limits: ServerLimits): number {
  return Math.max(16, Math.min(Math.floor(limits.chunkedPrefillSize / 2), limits.contextLength - 16, Math.floor(limits.maxTotalTokens / 4)));
}

export async function identifyScheduling(options: SchedulingProbeOptions): Promise<IdentifiedScheduling> {
  const { limits } = options;
  const streams = Math.min(4, limits.maxRunningRequests - 1);
  if (streams < 1) return { mixedChunk: null, samples: [], evidence: 'not probed: the server runs one request at a time' };
  const promptTokens = schedulingPromptTokens(limits);
  const streamTokens = 40;
  const samples: SchedulingProbeSample[] = [];
  for (let probe = 0; probe < (options.probes ?? 3); probe++) {
    const eventsMs = Array.from({ length: streams }, () => [] as number[]);
    let started = 0;
    let allStarted = (): void => {};
    const running = new Promise<void>((resolve) => {
      allStarted = resolve;
    });
    const members = Promise.all(
      eventsMs.map((events) =>
        streamGenerate(options.baseUrl, options.clock, options.prompt(32), streamTokens, options.timeoutMs, true, () => {
          if (++started === streams) allStarted();
        }, events),
      ),
    );
    await Promise.race([running, members]);
    // Six steps of the streams decoding together before the prompt: their gap before it is the baseline.
    await new Promise((resolve) => setTimeout(resolve, 6 * Math.max(options.decodeStepMs, 1)));
    const answer = await streamGenerate(options.baseUrl, options.clock, options.prompt(promptTokens), 2, options.timeoutMs, true);
    const spansMs = serverSpansMs(await members);
    const timing = stepTimes(answer);
    const sample = readSchedulingProbe(eventsMs, answer.sentMs, answer.firstEventMs, timing.prefillMs, timing.fromServer ? spansMs : undefined);
    if (sample !== null) samples.push(sample);
  }
  if (samples.length === 0) return { mixedChunk: null, samples, evidence: 'the probe could not be read: the running streams did not decode through the prompt' };
  const { mixedChunk } = schedulingVerdict(samples);
  return { mixedChunk, samples, evidence: schedulingEvidence(samples, promptTokens, streams) };
}

/**
 * What the probes saw, in words (the profile's `scheduling.evidence` and calibrate's line). Medians are taken over
 * the probes that vote: an unreadable stall is a broken measurement, and a median taken with it would print a figure
 * no probe saw; the unreadable ones are counted and named apart.
 */
export function schedulingEvidence(samples: readonly SchedulingProbeSample[], promptTokens: number, streams: number): string {
  const { mixedChunk, clientDecided } = schedulingVerdict(samples);
  const voting = samples.filter((sample) => sample.unreadable === undefined);
  const unreadable = samples.filter((sample) => sample.unreadable !== undefined);
  const mixedVotes = voting.filter((sample) => sample.mixed).length;
  const gap = median(samples.map((sample) => sample.decodeGapMs));
  const nearest = median(samples.map((sample) => sample.nearestTokenMs));
  const stall = median(samples.map((sample) => sample.stallMs));
  const serverSamples = voting.filter((sample) => sample.serverStallMs !== undefined);
  const unexplained = serverSamples.filter((sample) => sample.serverExplained === false).length;
  const serverLine =
    serverSamples.length === 0
      ? ''
      : `the streams' decode spans grew by ${median(serverSamples.map((sample) => sample.serverStallMs as number)).toFixed(2)} ms against the prompt's ` +
        `${median(serverSamples.map((sample) => sample.prefillMs)).toFixed(2)} ms prefill step (their own decode step ` +
        `${median(serverSamples.map((sample) => sample.serverDecodeStepMs as number)).toFixed(2)} ms; ` +
        `the whole step: apart, the step less one decode step: mixed` +
        `${unexplained === 0 ? '' : `; in ${unexplained} ${unexplained === 1 ? 'probe' : 'probes'} neither explained the stall, and the client's reading decided`}` +
        `${clientDecided ? "; the probes' stalls disagreed, so the client's reading, the same in every probe, decided" : ''}); `;
  const unreadableLine =
    unreadable.length === 0
      ? ''
      : `${unreadable.length} ${unreadable.length === 1 ? 'probe' : 'probes'} unreadable, not voting (${unreadable.map((sample) => sample.unreadable).join('; ')}: ` +
        `no scheduling does that; the engine's step time moved within the probe, or a stream was preempted` +
        `${voting.length === 0 && clientDecided ? "; so the client's reading, the same in every probe, decided" : ''}); `;
  const coincidences = samples.filter((sample) => sample.coincided).length;
  const seen =
    `a ${promptTokens}-token prompt sent while ${streams} streams decoded, ${samples.length} probes, ${mixedVotes} of ${voting.length} voting read as mixed: ` +
    `${unreadableLine}${serverLine}` +
    `on the client, the streams' nearest token came ${nearest.toFixed(2)} ms from the prompt's first token in the median probe (their step ${gap.toFixed(2)} ms; ` +
    `together in ${coincidences} of ${samples.length} probes) and their longest gap was ${stall.toFixed(2)} ms`;
  const verdict = mixedChunk === null ? 'no probe could vote' : mixedChunk ? 'prefill chunks share steps with decoding' : 'prefill runs in steps of its own';
  return `${seen}: ${verdict}`;
}

/**
 * The verdict over the probes that vote (those whose server-side stall is unreadable do not): their majority, except
 * where the server-side readings disagree among themselves and the client's reading is the same in every voting probe;
 * then the client's decides. A tie (two voting probes of three) reads as apart, SGLang's default. When no probe votes,
 * a client reading the same in every probe decides; null when it is split too. The stall reading tells the two schedulings apart by one decode step, which a jittery engine's step times can
 * cover: bench/foreign-engine (lognormal jitter, decode-first mixed steps) once read 1 probe of 3 as mixed by the stall
 * (median growth 20.4 ms against a 22.5 ms prompt step and a 6.4 ms decode step) while every probe's streams had a
 * token 0.08 ms from the prompt's first (a step's tokens leave together, so only a mixing server does that); the
 * profile then said apart, and the twin priced the engine's mixed steps as prefill steps alone (0.95x TTFT p90 -88%).
 * One probe's merged client reads (a busy host) still cannot outvote its server reading: that needs every probe's
 * client reading against a split server.
 */
export function schedulingVerdict(samples: readonly SchedulingProbeSample[]): { mixedChunk: boolean | null; clientDecided: boolean } {
  const voting = samples.filter((sample) => sample.unreadable === undefined);
  if (voting.length === 0) {
    // No stall could be read, but a client reading is not made of stalls: the same in every probe, it decides, as it
    // does where stalls split (defaulting to apart had priced a mixing engine's steps as prefill alone: -88% above).
    const together = samples.filter((sample) => sample.coincided).length;
    return together === 0 || together === samples.length ? { mixedChunk: together === samples.length, clientDecided: true } : { mixedChunk: null, clientDecided: false };
  }
  const byServer = voting.filter((sample) => sample.serverExplained === true);
  const serverSplit = byServer.some((sample) => sample.mixed) && byServer.some((sample) => !sample.mixed);
  const coincidences = voting.filter((sample) => sample.coincided).length;
  if (serverSplit && (coincidences === 0 || coincidences === voting.length)) return { mixedChunk: coincidences === voting.length, clientDecided: true };
  return { mixedChunk: voting.filter((sample) => sample.mixed).length * 2 > voting.length, clientDecided: false };
}

/** Each answer's decode span (prefill_finished_time to request_finished_ts, ms); undefined without server timestamps. */
function serverSpansMs(answers: readonly StreamResult[]): number[] | undefined {
  const spans: number[] = [];
  for (const answer of answers) {
    const prefilled = answer.meta['prefill_finished_time'];
    const finished = answer.meta['request_finished_ts'];
    if (typeof prefilled !== 'number' || typeof finished !== 'number') return undefined;
    spans.push((finished - prefilled) * 1000);
  }
  return spans;
}

/** The profile's record of how the server schedules: the probe's verdict and the server's own limits. */
export function schedulingOf(limits: ServerLimits, identified: IdentifiedScheduling): ProfileScheduling {
  const reported = limits.reported;
  const fromServer = reported !== undefined && reported.maxRunningRequests && reported.chunkedPrefillSize && reported.maxTotalTokens;
  const assumed = reported === undefined ? [] : (['maxRunningRequests', 'chunkedPrefillSize', 'maxTotalTokens'] as const).filter((key) => !reported[key]);
  return {
    mixedChunk: identified.mixedChunk ?? false,
    chunkedPrefillSize: limits.chunkedPrefillSize,
    maxRunningRequests: limits.maxRunningRequests,
    maxTotalTokens: limits.maxTotalTokens,
    // The twin allocates KV, cuts chunks and reuses cached prefixes in the server's pages (src/engine/core/kv-pool.ts).
    ...(limits.pageSize === undefined ? {} : { pageSize: limits.pageSize }),
    source: fromServer ? 'server_info' : 'probed',
    evidence:
      `Mixed chunk ${identified.mixedChunk === null ? 'unknown, taken as off' : 'probed'}: ${identified.evidence}.` +
      (assumed.length === 0 ? '' : ` The server's info did not name ${assumed.join(', ')}: SGLang's usual values were assumed; pass them to the twin if you know better.`),
  };
}
