import { ServelabError } from '../../errors/servelab-error.js';
import type { EngineProfile, MeasuredProfile, RooflineProfile, ServingLatency } from '../../types/engine.js';
import { fitRooflineProfile } from './fit-profile.js';
import { metricErrorsPercent, REPLAY_METRIC_NAMES, replayMetrics, replayObjective, type ReplayMetrics } from './replay-error.js';
import { replayRun, type ReplaySettings } from './replay-run.js';
import { median } from './robust-statistics.js';
import type { RecordedRun, RunLimits } from './run-records.js';
import { stepsFromRuns } from './steps-from-runs.js';

/**
 * `servelab calibrate --from-runs`: fits (or refits) a profile to real runs by replaying them. Every request of the
 * runs enters the simulated engine when it entered the real server's queue, with its real prompt and output lengths,
 * under the server's limits; the profile's step costs are then moved (multiplicative factors, a coordinate search
 * that halves its step when no move helps) until the replay's per-request server timings are closest to the recorded
 * ones (replay-error.ts). Whether the server mixes prefill into decode steps is not in the records: both ways are
 * fitted and the closer one is kept, and said.
 *
 * Without a profile to start from, a roofline is first fitted to step times read off the records (steps-from-runs.ts).
 * With several runs, the last one is held out: the fit never sees it, and its error there, before and after, is the
 * figure to believe.
 */

/** The most requests of one run the search replays (the first ones, in queue order). */
export const MAX_FIT_REQUESTS = 5000;

export interface RefitOptions {
  /** The runs, in the order given; the last is held out when there are two or more. */
  runs: RecordedRun[];
  /** The profile to refit; absent: a roofline fitted from the records first. */
  profile?: EngineProfile;
  /** The server's limits (flags); what is absent comes from the runs' config.json. */
  limits: RunLimits;
  name?: string;
  nowIso?: string;
  /** Replays allowed per scheduling mode (default 400). */
  maxEvaluations?: number;
  /** Hold the last of two or more runs out of the fit (default true); false fits every run, and checks none. */
  holdOutLast?: boolean;
  /** What refits, for the profile's derivation (default "calibrate --from-runs"). */
  source?: string;
  onProgress?: (message: string) => void;
}

export interface HeldOutCheck {
  directory: string;
  requests: number;
  real: ReplayMetrics;
  start: ReplayMetrics;
  refit: ReplayMetrics;
  startErrorsPercent: ReplayMetrics;
  refitErrorsPercent: ReplayMetrics;
}

export interface RefitResult {
  profile: EngineProfile;
  startProfile: EngineProfile;
  enableMixedChunk: boolean;
  /** The objective over the fitted runs: the start profile, the refit, and the refit in the other scheduling mode. */
  startObjective: number;
  refitObjective: number;
  otherModeObjective: number;
  /** The multiplicative factor applied to each knob. */
  factors: Record<string, number>;
  fittedRequests: number;
  /** Each fitted run's server-side metric errors with the refit: in-sample, so a floor under the held-out error. */
  fittedErrors: { directory: string; errorsPercent: ReplayMetrics }[];
  heldOut: HeldOutCheck | null;
  evaluations: number;
}

/** A profile's adjustable step costs: names, and the profile with each multiplied by a factor. */
interface Knobs {
  names: string[];
  apply(factors: readonly number[]): EngineProfile;
}

function knobsOf(profile: EngineProfile): Knobs {
  if (profile.kind === 'simple') {
    return { names: ['stepMs'], apply: (factors) => ({ ...profile, stepMs: profile.stepMs * (factors[0] as number) }) };
  }
  if (profile.kind === 'roofline') {
    const names = (Object.keys(profile.coefficients) as (keyof RooflineProfile['coefficients'])[]).filter((key) => profile.coefficients[key] > 0);
    return {
      names,
      apply: (factors) => {
        const coefficients = { ...profile.coefficients };
        names.forEach((name, index) => (coefficients[name] = profile.coefficients[name] * (factors[index] as number)));
        return { ...profile, coefficients };
      },
    };
  }
  // A measured table: per kind of cell (decode-only, prefill-only, mixed) a factor, so its shape over each axis, which
  // calibration measured, is kept and only its level moves. Decode and mixed cells have two: one at a single sequence
  // and one at the table's largest batch, log-linear in the batch between (each moves one end and leaves the other),
  // since what an idle server's sweep misprices most is often the full batch that only load reaches.
  const table = profile.table;
  const largestBatch = Math.max(2, ...table.decodeSequences);
  const familyOf = (i: number, j: number): 'decode' | 'prefill' | 'mixed' =>
    (table.prefillTokens[j] as number) > 0 ? ((table.decodeSequences[i] as number) > 0 ? 'mixed' : 'prefill') : 'decode';
  const present = new Set<string>();
  table.stepMs.forEach((plane, i) => plane.forEach((_row, j) => present.add(familyOf(i, j))));
  const names = [
    ...(present.has('decode') ? ['decode cells at batch 1', 'decode cells at the largest batch'] : []),
    ...(present.has('prefill') ? ['prefill cells'] : []),
    ...(present.has('mixed') ? ['mixed cells at batch 1', 'mixed cells at the largest batch'] : []),
  ];
  return {
    names,
    apply: (factors) => {
      const factor = (name: string): number => (names.includes(name) ? (factors[names.indexOf(name)] as number) : 1);
      const factorOf = (i: number, j: number): number => {
        const family = familyOf(i, j);
        if (family === 'prefill') return factor('prefill cells');
        const batchShare = Math.log(Math.max(1, table.decodeSequences[i] as number)) / Math.log(largestBatch);
        return factor(`${family} cells at batch 1`) ** (1 - batchShare) * factor(`${family} cells at the largest batch`) ** batchShare;
      };
      const stepMs = table.stepMs.map((plane, i) => plane.map((row, j) => row.map((ms) => ms * factorOf(i, j))));
      return { ...profile, table: { ...table, stepMs } } satisfies MeasuredProfile;
    },
  };
}

/** The limits a replay uses: the flags first, then each run's config.json (runs on the simulated engine record them). */
function replayLimits(runs: readonly RecordedRun[], flags: RunLimits): Omit<ReplaySettings, 'enableMixedChunk'> {
  const fromRuns = (key: 'maxRunningRequests' | 'chunkedPrefillSize' | 'maxTotalTokens'): number | undefined =>
    flags[key] ?? runs.find((run) => run.limits[key] !== undefined)?.limits[key];
  const limits = { maxRunningRequests: fromRuns('maxRunningRequests'), chunkedPrefillSize: fromRuns('chunkedPrefillSize'), maxTotalTokens: fromRuns('maxTotalTokens') };
  const missing = (Object.keys(limits) as (keyof typeof limits)[]).filter((key) => limits[key] === undefined);
  if (missing.length > 0) {
    const flagOf = { maxRunningRequests: '--max-running-requests', chunkedPrefillSize: '--chunked-prefill-size', maxTotalTokens: '--max-total-tokens' };
    throw new ServelabError(
      'INVALID_CONFIG',
      `the runs do not record the server's ${missing.map((key) => flagOf[key]).join(', ')} (an attached server's limits are not in its runs); ` +
        `pass ${missing.map((key) => `${flagOf[key]} N`).join(' ')} with the values in the server's /server_info`,
    );
  }
  // The page size is not required: a run that does not record one replays in its start profile's pages, else 1.
  const pageSize = flags.pageSize ?? runs.find((run) => run.limits.pageSize !== undefined)?.limits.pageSize;
  return { ...(limits as Omit<ReplaySettings, 'enableMixedChunk' | 'pageSize'>), ...(pageSize === undefined ? {} : { pageSize }) };
}

/** The serving path's medians over the fitted runs' records, where they carry its instants. */
function servingLatencyOf(runs: readonly RecordedRun[]): ServingLatency | undefined {
  const values = (key: 'ingressMs' | 'deliveryMs' | 'networkMs'): number[] =>
    runs.flatMap((run) => run.requests.map((request) => request[key]).filter((value): value is number => value !== undefined && Number.isFinite(value)));
  const ingress = values('ingressMs');
  const delivery = values('deliveryMs');
  if (ingress.length === 0 || delivery.length === 0) return undefined;
  const network = values('networkMs');
  return {
    ingressMs: Math.max(0, median(ingress)),
    deliveryMs: Math.max(0, median(delivery)),
    ...(network.length === 0 ? {} : { networkMs: Math.max(0, median(network)) }),
    source: `medians over the ${ingress.length} requests of ${runs.map((run) => run.directory).join(', ')} (calibrate --from-runs)`,
  };
}

/**
 * The start profile's path with the runs' medians over it. The runs' delivery is the way back only (first token at
 * the client less at the server); where they carry no network time, the start's (calibrate's 0, its delivery having
 * held the way there) would no longer be true, so it is left out and the twin says that stage is missing.
 */
function refittedPath(start: ServingLatency | undefined, fromRuns: ServingLatency): ServingLatency {
  const path: ServingLatency = { ...start, ...fromRuns };
  if (fromRuns.networkMs === undefined) delete path.networkMs;
  return path;
}

/** A roofline fitted to the step times the records show, for runs given without a profile. */
function startingRoofline(runs: readonly RecordedRun[], limits: Omit<ReplaySettings, 'enableMixedChunk'>, name: string): RooflineProfile {
  const observations = stepsFromRuns(runs.map((run) => run.requests), limits.chunkedPrefillSize);
  const fit = fitRooflineProfile(observations);
  if (fit === null) throw new ServelabError('INVALID_CONFIG', 'the runs show no step that a profile could be fitted to; give runs whose requests generated 3 tokens or more');
  const longest = runs.reduce((most, run) => run.requests.reduce((inRun, request) => Math.max(inRun, request.promptTokens + request.outputTokens), most), 0);
  // The search scales coefficients, so a zero stays zero: a plateau fitted as overhead alone is split in halves, so that
  // the floor (what batching hides) can move apart from the fixed cost.
  const coefficients = { ...fit.coefficients };
  if (coefficients.weightsFloorMs === 0 && coefficients.stepOverheadMs > 0) {
    coefficients.stepOverheadMs /= 2;
    coefficients.weightsFloorMs = coefficients.stepOverheadMs;
  }
  return {
    kind: 'roofline',
    name,
    description: 'Fitted from recorded runs',
    model: 'unknown',
    hardware: 'measured',
    derivation: [`A first roofline fit to ${observations.length} step times read off the records (${fit.rmsErrorPercent.toFixed(1)}% RMS over them).`],
    coefficients,
    maxTotalTokens: limits.maxTotalTokens ?? 1_000_000,
    contextLength: Math.max(4096, longest * 2),
  };
}

export function refitFromRuns(options: RefitOptions): RefitResult {
  const progress = options.onProgress ?? ((): void => {});
  if (options.runs.length === 0) throw new ServelabError('INVALID_CONFIG', 'calibrate --from-runs needs at least one run directory');
  // Every replay of the search replays every fitted request, hundreds of times: a long run is fitted on its first
  // MAX_FIT_REQUESTS requests (a contiguous stretch, so its queueing is the run's own), and said.
  const holdOut = options.runs.length >= 2 && options.holdOutLast !== false;
  const fitted = (holdOut ? options.runs.slice(0, -1) : options.runs).map((run) =>
    run.requests.length <= MAX_FIT_REQUESTS ? run : { ...run, requests: run.requests.slice(0, MAX_FIT_REQUESTS), truncatedFrom: run.requests.length },
  );
  const heldOutRun = holdOut ? (options.runs[options.runs.length - 1] as RecordedRun) : null;
  const limits = replayLimits(options.runs, options.limits);
  const name = options.name ?? 'refit';
  const start = options.profile ?? startingRoofline(fitted, limits, name);
  const knobs = knobsOf(start);
  const maxEvaluations = options.maxEvaluations ?? 400;
  let evaluations = 0;
  const objective = (profile: EngineProfile, enableMixedChunk: boolean): number => {
    evaluations++;
    let weighted = 0;
    let count = 0;
    for (const run of fitted) {
      weighted += replayObjective(run.requests, replayRun(run, profile, { ...limits, enableMixedChunk })) * run.requests.length;
      count += run.requests.length;
    }
    return weighted / count;
  };
  const search = (enableMixedChunk: boolean): { logFactors: number[]; value: number } => {
    let logFactors = knobs.names.map(() => 0);
    let value = objective(start, enableMixedChunk);
    const budget = evaluations + maxEvaluations;
    // Factors of 2 first, down to 1%: the start may be off by several times (a profile from another machine). A pass
    // ends when no move of 1% helps; another pass from factors of 2 escapes where one knob's move needed another's.
    for (let pass = 0; pass < 4 && evaluations < budget; pass++) {
      const before = value;
      for (let stepLog = Math.log(2); stepLog > Math.log(1.01) && evaluations < budget; ) {
        let moved = false;
        for (let knob = 0; knob < knobs.names.length && evaluations < budget; knob++) {
          for (const direction of [1, -1]) {
            const candidate = logFactors.slice();
            candidate[knob] = (candidate[knob] as number) + direction * stepLog;
            const candidateValue = objective(knobs.apply(candidate.map(Math.exp)), enableMixedChunk);
            if (candidateValue < value - 1e-12) {
              logFactors = candidate;
              value = candidateValue;
              moved = true;
              break;
            }
          }
        }
        if (!moved) stepLog /= 2;
      }
      if (value > before * 0.99) break;
    }
    return { logFactors, value };
  };
  const separate = search(false);
  progress(`prefill steps apart from decode steps: objective ${separate.value.toFixed(4)}`);
  const mixed = search(true);
  progress(`prefill mixed into decode steps: objective ${mixed.value.toFixed(4)}`);
  const enableMixedChunk = mixed.value < separate.value;
  const best = enableMixedChunk ? mixed : separate;
  const factors = best.logFactors.map(Math.exp);
  const refit = knobs.apply(factors);
  const startObjective = objective(start, enableMixedChunk);
  const fittedRequests = fitted.reduce((sum, run) => sum + run.requests.length, 0);
  let heldOut: HeldOutCheck | null = null;
  if (heldOutRun !== null) {
    const settings = { ...limits, enableMixedChunk };
    const real = replayMetrics(heldOutRun.requests);
    const startMetrics = replayMetrics(heldOutRun.requests, replayRun(heldOutRun, start, settings));
    const refitMetrics = replayMetrics(heldOutRun.requests, replayRun(heldOutRun, refit, settings));
    heldOut = {
      directory: heldOutRun.directory,
      requests: heldOutRun.requests.length,
      real,
      start: startMetrics,
      refit: refitMetrics,
      startErrorsPercent: metricErrorsPercent(real, startMetrics),
      refitErrorsPercent: metricErrorsPercent(real, refitMetrics),
    };
  }
  const fittedErrors = fitted.map((run) => ({
    directory: run.directory,
    errorsPercent: metricErrorsPercent(replayMetrics(run.requests), replayMetrics(run.requests, replayRun(run, refit, { ...limits, enableMixedChunk }))),
  }));
  const latency = servingLatencyOf(fitted);
  const truncated = fitted.filter((run) => run.truncatedFrom !== undefined);
  if (truncated.length > 0) progress(`fitted on the first ${MAX_FIT_REQUESTS} requests of ${truncated.map((run) => `${run.directory} (of ${run.truncatedFrom})`).join(', ')}`);
  const derivationLines = [
    `Refit by ${options.source ?? 'calibrate --from-runs'}${options.nowIso === undefined ? '' : ` on ${options.nowIso}`} from ${fittedRequests} requests of ${fitted.map((run) => run.directory).join(', ')}: ` +
      'each run replayed in virtual time (arrivals at the server\'s queue, real prompt and output lengths, the server\'s limits) and the step costs scaled ' +
      `(${knobs.names.map((knobName, index) => `${knobName} x${(factors[index] as number).toFixed(3)}`).join(', ')}) to bring the replay's per-request server TTFT and TPOT closest to the records ` +
      `(mean squared log ratio ${startObjective.toFixed(4)} before, ${best.value.toFixed(4)} after).`,
    `Scheduling that fits the runs best: ${enableMixedChunk ? 'prefill mixed into decode steps (--enable-mixed-chunk)' : 'prefill steps apart from decode steps'} ` +
      `(objective ${best.value.toFixed(4)} against ${(enableMixedChunk ? separate : mixed).value.toFixed(4)} the other way).`,
    ...(heldOut === null
      ? [`No run was held out (${options.runs.length >= 2 ? 'every run fitted' : 'one run given'}): the error on a run the fit did not see is unknown here.`]
      : [`Held out ${heldOut.directory} (${heldOut.requests} requests, not fitted): worst server-side metric error ${describeWorst(heldOut.startErrorsPercent)} before, ${describeWorst(heldOut.refitErrorsPercent)} after.`]),
    ...(latency === undefined ? [] : [`Serving latency from the runs' records: ingress ${latency.ingressMs.toFixed(2)} ms, delivery ${latency.deliveryMs.toFixed(2)} ms${latency.networkMs === undefined ? '' : `, network ${latency.networkMs.toFixed(2)} ms`} (medians).`]),
  ];
  // The start profile's end-to-end validation and held-out step error describe its step costs, not the refit's: kept,
  // they would have calibrate's recommendation and the twin's sensitivity band speak of another profile.
  const withNotes = (profile: EngineProfile): EngineProfile => {
    if (profile.kind === 'simple') return profile;
    const { validation: _validation, stepError: _stepError, ...rest } = profile;
    const dropped = [profile.validation === undefined ? '' : 'end-to-end validation', profile.stepError === undefined ? '' : 'held-out step error'].filter((what) => what !== '');
    const droppedLine = dropped.length === 0 ? [] : [`The start profile's ${dropped.join(' and ')} are not carried over: they describe its step costs before this refit.`];
    // The scheduling the replays fit best is what the twin runs with this profile alone (its other limits are kept).
    const scheduling =
      profile.scheduling === undefined
        ? {}
        : { scheduling: { ...profile.scheduling, mixedChunk: enableMixedChunk, evidence: `${profile.scheduling.evidence ?? ''}${profile.scheduling.evidence === undefined ? '' : ' '}Refit from runs: ${enableMixedChunk ? 'mixed' : 'apart'} fits the runs best.` } };
    return {
      ...rest,
      name,
      derivation: [...profile.derivation, ...derivationLines, ...droppedLine],
      ...scheduling,
      ...(latency === undefined ? {} : { servingLatency: refittedPath(profile.servingLatency, latency) }),
    };
  };
  return {
    profile: withNotes(refit),
    startProfile: start,
    enableMixedChunk,
    startObjective,
    refitObjective: best.value,
    otherModeObjective: (enableMixedChunk ? separate : mixed).value,
    factors: Object.fromEntries(knobs.names.map((knobName, index) => [knobName, factors[index] as number])),
    fittedRequests,
    fittedErrors,
    heldOut,
    evaluations,
  };
}

export function describeWorst(errors: ReplayMetrics): string {
  const [key, value] = (Object.entries(errors) as [keyof ReplayMetrics, number][]).reduce((worst, entry) => (Math.abs(entry[1]) > Math.abs(worst[1]) ? entry : worst));
  return `${value >= 0 ? '+' : ''}${value.toFixed(1)}% (${REPLAY_METRIC_NAMES[key]})`;
}
