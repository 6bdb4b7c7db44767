import { refitFromRuns } from '../engine/calibration/refit-from-runs.js';
import { readRecordedRun, type RecordedRun, type RunLimits } from '../engine/calibration/run-records.js';
import { ServelabError } from '../errors/servelab-error.js';
import { profileValidation, type CalibratedProfile, type ProfileValidationResult, type ValidationResult, type ValidationRow } from './validate-profiles.js';

/**
 * calibrate's refit under load: the profile calibrate recommends, refitted to the server's own validation runs
 * (refit-from-runs.ts, the path `calibrate --from-runs` takes), so that what the server costs under load and the idle
 * sweep cannot see is in the twin. On the foreign engine (bench/foreign-engine) the twin with the exact step law was as
 * far off at 0.95x of capacity as the measured table (TTFT p50 -33%): the engine serving 16 streams runs its steps a
 * few percent slower than its law, and queueing at 0.95x multiplies that (docs/simulated-engine.md, "Pass 9").
 *
 * Checked the only honest way with the runs at hand: each rate by a refit that did not see that rate's run (fitted on
 * the other rates' runs), the twin in virtual time against the server's run there, as the validation checks the other
 * profiles. The profile written is then refitted on every run.
 */

export interface ValidationRefitOptions {
  validation: Pick<ValidationResult, 'realRuns' | 'compare'>;
  /** The profile to refit (the one the validation recommends), and its label. */
  start: { label: string; profile: CalibratedProfile };
  /** The server's limits as calibration read them (an attached server's runs do not record them). */
  limits: RunLimits;
  nowIso?: string;
  onProgress?: (message: string) => void;
}

export interface ValidationRefit {
  label: string;
  /** Refitted on every validation run, with each rate's held-out check as its `validation`. */
  profile: CalibratedProfile;
  /** Each rate checked by a refit fitted on the other rates' runs. */
  check: ProfileValidationResult;
  enableMixedChunk: boolean;
  factors: Record<string, number>;
}

/**
 * The refit and its held-out check, or why it cannot be made: fewer than two rates, or runs without the server's
 * timing stamps (SGLang without --enable-metrics).
 */
export async function refitFromValidation(options: ValidationRefitOptions): Promise<{ refit: ValidationRefit } | { skipped: string }> {
  const runs = options.validation.realRuns;
  if (runs.length < 2) return { skipped: 'it needs two validation rates or more, one to fit and one to check' };
  let recorded: RecordedRun[];
  try {
    recorded = runs.map((run) => readRecordedRun(run.directory));
  } catch (error) {
    if (error instanceof ServelabError) return { skipped: error.message };
    throw error;
  }
  const progress = options.onProgress ?? ((): void => {});
  const label = `${options.start.label}-refit`;
  const refit = (fitted: RecordedRun[]) =>
    refitFromRuns({
      runs: fitted,
      profile: options.start.profile,
      limits: options.limits,
      name: `calibrated-${label}`,
      holdOutLast: false,
      source: "calibrate's refit to its validation runs",
      ...(options.nowIso === undefined ? {} : { nowIso: options.nowIso }),
    });
  const rows: ValidationRow[] = [];
  for (const [index, run] of runs.entries()) {
    progress(`refit: fitted without the ${run.requestRate} req/s run, checked on it`);
    const heldOut = refit(recorded.filter((_, other) => other !== index));
    rows.push(await options.validation.compare(heldOut.profile as CalibratedProfile, `twin-${label}-${run.requestRate}`, run));
  }
  const final = refit(recorded);
  const check = {
    label,
    rows,
    validation: profileValidation(
      rows,
      `servelab calibrate's refit to its validation runs, each rate checked by a refit fitted on the other rates' runs only (the twin in virtual time against the server's run there); error = (twin - server) / server`,
    ),
  };
  return {
    refit: {
      label,
      profile: { ...(final.profile as CalibratedProfile), validation: check.validation },
      check,
      enableMixedChunk: final.enableMixedChunk,
      factors: final.factors,
    },
  };
}
