import { summarize } from '../../analysis/summarize.js';
import { TWIN_HEADLINE_METRICS, type TwinHeadlineMetricKey } from '../../analysis/twin-headline-metrics.js';
import type { EngineProfile } from '../../types/engine.js';
import type { LoadResult } from '../../types/load.js';
import type { RunData, TestLevel } from '../../types/run.js';
import { servelabVersion } from '../../utils/version.js';

/**
 * How far to trust the twin: the same workload run again in virtual time with every step `1 - e` and `1 + e` times as
 * long, e the profile's own step error, and how far each headline metric moves. Near capacity queueing amplifies a
 * step-time error (docs/simulated-engine.md: the engine's exact law scaled by 1% moved 0.95x TTFT p50 by 8-19 points),
 * so a point estimate there says little without this band.
 */

/** Assumed where a profile records no held-out step error: calibrate's held-out errors were 2-5% (issue 26's engines). */
export const ASSUMED_STEP_ERROR_PERCENT = 5;
/** The twin's end-to-end target (issue 26): a metric that moves by more than this within the band gets a warning. */
export const SENSITIVITY_TARGET_PERCENT = 15;
/**
 * Above this many requests no band is run, and the run says so: the band is two more runs of the whole workload, and
 * it keeps a copy of the workload's requests during the main run (which otherwise lets each go once it is sent).
 */
export const SENSITIVITY_REQUEST_LIMIT = 200_000;

/** Where e came from. */
export type StepErrorSource = 'flag' | 'profile held-out' | 'profile fit' | 'assumed';

export interface StepError {
  percent: number;
  source: StepErrorSource;
  /** In words, for the reader: which field, or why it is assumed. */
  detail: string;
}

/** The metrics the band reports: the twin's headline metrics, as summary.json has them (requests per second; seconds). */
export type SensitivityMetricKey = TwinHeadlineMetricKey;

/** One metric at -e, 0 and +e, and its change at each side against 0 (percent; null where a value is missing or 0). */
export interface SensitivityMetric {
  name: string;
  atMinus: number | null;
  atZero: number | null;
  atPlus: number | null;
  minusChangePercent: number | null;
  plusChangePercent: number | null;
}

/** summary.json `extras.twinSensitivity`. */
export type TwinSensitivity =
  | {
      stepErrorPercent: number;
      source: StepErrorSource;
      sourceDetail: string;
      targetPercent: number;
      metrics: Record<SensitivityMetricKey, SensitivityMetric>;
      /** The metrics that move by more than the target at either side, worst change first; empty when none does. */
      untrusted: { metric: SensitivityMetricKey; name: string; worstChangePercent: number }[];
    }
  | { stepErrorPercent: number; source: StepErrorSource; sourceDetail: string; skipped: string };

/**
 * calibrate records each profile's step error in its `stepError` field (src/engine/calibration/calibrate-profile.ts).
 * The held-out RMS is the one used: the fit error of a measured table is near 0 by construction (it passes through its
 * points), and the held-out error is the step error the twin meets between them. Profiles calibrated before that field
 * say it only in a derivation line (describeQuality: "...; 2.10% RMS (4.00% at worst) on 12 held-out steps."), which
 * is read for them.
 */
const HELD_OUT_LINE = /(\d+(?:\.\d+)?)% RMS \(\d+(?:\.\d+)?% at worst\) on (\d+) held-out steps/;

/** The step error as people read it: two decimals at most ("2.32", "2.1"); summary.json keeps the profile's own figure. */
export function stepErrorPercentText(percent: number): string {
  return String(Number(percent.toFixed(2)));
}

/** e for a run: the flag's, else the profile's recorded RMS step error (the larger of held-out and fit), else an assumed default (said so). */
export function stepErrorFor(profile: EngineProfile, setting: number | 'auto'): StepError {
  if (setting !== 'auto') return { percent: setting, source: 'flag', detail: '--twin-sensitivity' };
  const recorded = profile.kind === 'simple' ? undefined : profile.stepError;
  if (recorded?.heldOutRmsPercent !== undefined && recorded.heldOutRmsPercent !== null && recorded.heldOutRmsPercent > 0) {
    // A fitted form does not pass through its points, so its error over every measured step is one the twin meets too;
    // a few held-out steps can happen to sit closer to it (sim-mixed's roofline: 1.35% held out, 2.42% over all 54
    // steps, and a 0.95x TTFT p50 21% off that the held-out band called trustworthy). The larger of the two is used.
    if (recorded.fitRmsPercent > recorded.heldOutRmsPercent) {
      return { percent: recorded.fitRmsPercent, source: 'profile fit', detail: `profile ${profile.name}'s RMS step error over every measured step, above its ${recorded.heldOutRmsPercent}% on ${recorded.heldOutSteps} held-out steps` };
    }
    return { percent: recorded.heldOutRmsPercent, source: 'profile held-out', detail: `profile ${profile.name}'s held-out RMS step error (${recorded.heldOutSteps} steps calibrate left out of its fit)` };
  }
  const derivation = profile.kind === 'simple' ? [] : profile.derivation;
  for (const line of derivation) {
    const found = HELD_OUT_LINE.exec(line);
    if (found !== null && Number(found[1]) > 0) {
      return { percent: Number(found[1]), source: 'profile held-out', detail: `profile ${profile.name}'s held-out RMS step error (${found[2]} steps calibrate left out of its fit)` };
    }
  }
  return {
    percent: ASSUMED_STEP_ERROR_PERCENT,
    source: 'assumed',
    detail: `assumed: profile ${profile.name ?? profile.kind} records no held-out step error (calibrate writes one); set --twin-sensitivity to your own`,
  };
}

/**
 * Whether a run of `requestCount` requests gets its band: null when it does, else what summary.json says instead (a run
 * above SENSITIVITY_REQUEST_LIMIT requests, where the band's two runs and the workload's copy would cost too much).
 */
export function skippedBand(error: StepError, requestCount: number): TwinSensitivity | null {
  if (requestCount <= SENSITIVITY_REQUEST_LIMIT) return null;
  return {
    stepErrorPercent: error.percent,
    source: error.source,
    sourceDetail: error.detail,
    skipped: `not run: ${requestCount} requests, above the ${SENSITIVITY_REQUEST_LIMIT} the band runs for (it is two more runs of the whole workload); run a shorter workload with the same settings to see it`,
  };
}

/** The headline metrics of a virtual run's load, through the same summary as summary.json's. */
export function bandMetricsOf(load: LoadResult, testLevel: TestLevel, requestRate: number): Record<SensitivityMetricKey, number | null> {
  const run: RunData = {
    info: { runId: 'twin-sensitivity', testLevel, target: 'sim', status: 'completed', startTime: load.startTime, endTime: load.endTime, requestRate, simulated: true, servelabVersion },
    config: {},
    records: load.records,
    events: [],
  };
  const summary = summarize(run);
  const values = {} as Record<SensitivityMetricKey, number | null>;
  for (const [key, , read] of TWIN_HEADLINE_METRICS) {
    const value = read(summary);
    values[key] = value === undefined || !Number.isFinite(value) ? null : value;
  }
  return values;
}

function changePercent(value: number | null, base: number | null): number | null {
  if (value === null || base === null || base === 0) return null;
  return ((value - base) / base) * 100;
}

/** The band from the three runs' metrics: each metric's values and changes, and those that move past the target. */
export function sensitivityBand(
  error: StepError,
  minus: Record<SensitivityMetricKey, number | null>,
  zero: Record<SensitivityMetricKey, number | null>,
  plus: Record<SensitivityMetricKey, number | null>,
): TwinSensitivity {
  const metrics = {} as Record<SensitivityMetricKey, SensitivityMetric>;
  const untrusted: { metric: SensitivityMetricKey; name: string; worstChangePercent: number }[] = [];
  for (const [key, name] of TWIN_HEADLINE_METRICS) {
    const minusChangePercent = changePercent(minus[key], zero[key]);
    const plusChangePercent = changePercent(plus[key], zero[key]);
    metrics[key] = { name, atMinus: minus[key], atZero: zero[key], atPlus: plus[key], minusChangePercent, plusChangePercent };
    const worst = [minusChangePercent, plusChangePercent].filter((change): change is number => change !== null).sort((a, b) => Math.abs(b) - Math.abs(a))[0];
    if (worst !== undefined && Math.abs(worst) > SENSITIVITY_TARGET_PERCENT) untrusted.push({ metric: key, name, worstChangePercent: worst });
  }
  untrusted.sort((a, b) => Math.abs(b.worstChangePercent) - Math.abs(a.worstChangePercent));
  return { stepErrorPercent: error.percent, source: error.source, sourceDetail: error.detail, targetPercent: SENSITIVITY_TARGET_PERCENT, metrics, untrusted };
}
