import type { StepObservation } from './fit-profile.js';
import { median } from './robust-statistics.js';

/**
 * The engine's time between steps, as the sweep read it beside its mixed probes (answer-timings.ts `betweenStepsMs`),
 * charged to the steps whose times do not hold it. A decode step is read off a stream's token intervals, which run
 * from one step's end to the next step's end and so hold the loop's work between steps; a prefill step and a mixed
 * step are read off a request's own stamps (forward_entry_time to prefill_finished_time), which hold the step alone.
 * The twin runs its steps back to back, each at its table price, so a prompt step priced without that time is priced
 * cheap: on bench/foreign-engine by 0.25-0.45 ms a step, which at 0.95x of capacity was worth tens of points of TTFT
 * p50 (docs/simulated-engine.md, "Pass 9").
 */
export interface BetweenSteps {
  /** Median over the mixed probes that read it, never below zero (ms). */
  ms: number;
  /** Mixed probes that read it. */
  probes: number;
}

/** The median between-step time over the mixed observations that carry one; null where none does (older files too). */
export function betweenSteps(observations: readonly StepObservation[]): BetweenSteps | null {
  const readings = observations.flatMap((observation) => (observation.kind === 'mixed' && observation.betweenStepsMs !== undefined && Number.isFinite(observation.betweenStepsMs) ? [observation.betweenStepsMs] : []));
  if (readings.length === 0) return null;
  return { ms: Math.max(0, median(readings)), probes: readings.length };
}

/** The observations as the twin charges them: prefill and mixed steps with the time between steps added (samples too). */
export function withBetweenSteps(observations: readonly StepObservation[], between: BetweenSteps | null): StepObservation[] {
  if (between === null || between.ms === 0) return [...observations];
  return observations.map((observation) =>
    observation.kind === 'decode'
      ? observation
      : {
          ...observation,
          stepMs: observation.stepMs + between.ms,
          ...(observation.samplesMs === undefined ? {} : { samplesMs: observation.samplesMs.map((sample) => sample + between.ms) }),
        },
  );
}

/** The profile's derivation line for it; `mixing`: whether the server mixes prefill into decode steps. */
export function describeBetweenSteps(between: BetweenSteps | null, mixing: boolean): string {
  if (!mixing) {
    return "No time between steps was read: the server runs prefill apart from decoding, so a stream's interval across a probe holds other steps besides; prefill and mixed steps are priced as stamped.";
  }
  return between === null
    ? 'No time between steps was read (no mixed probe read one, or the server has no forward_entry_time): prefill and mixed steps are priced as stamped.'
    : `Prefill and mixed steps carry the engine's time between steps, ${between.ms.toFixed(3)} ms (median beside ${between.probes} mixed probe${between.probes === 1 ? '' : 's'}: the decoding streams' token interval across the probe's step, less the step), which their own stamps leave out and decode steps, read off token intervals, hold.`;
}
