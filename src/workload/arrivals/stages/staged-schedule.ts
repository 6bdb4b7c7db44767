import { ServelabError } from '../../../errors/servelab-error.js';
import type { RateStage } from '../../../types/workload-settings.js';

interface RateSegment {
  startS: number;
  durationS: number;
  startRate: number;
  endRate: number;
  /** Expected arrivals before the segment starts (the cumulative rate). */
  cumulativeBefore: number;
}

/** Rejects stages that cannot make a schedule, naming the stage. */
export function checkRateStages(stages: readonly RateStage[]): void {
  if (stages.length === 0) throw new ServelabError('INVALID_CONFIG', 'stages is empty: give at least one {durationS, rate}');
  stages.forEach((stage, index) => {
    if (!(stage.durationS > 0) || !Number.isFinite(stage.durationS)) {
      throw new ServelabError('INVALID_CONFIG', `stage ${index}: durationS must be a finite number above 0, got ${String(stage.durationS)}`);
    }
    if (!(stage.rate >= 0) || !Number.isFinite(stage.rate)) {
      throw new ServelabError('INVALID_CONFIG', `stage ${index}: rate must be a finite number of requests per second, at least 0, got ${String(stage.rate)}`);
    }
    if (stage.ramp !== undefined && stage.ramp !== 'step' && stage.ramp !== 'linear') {
      throw new ServelabError('INVALID_CONFIG', `stage ${index}: ramp must be "step" or "linear", got ${String(stage.ramp)}`);
    }
  });
}

function segmentsOf(stages: readonly RateStage[]): RateSegment[] {
  const segments: RateSegment[] = [];
  let startS = 0;
  let cumulative = 0;
  let previousRate = 0;
  for (const stage of stages) {
    const startRate = stage.ramp === 'linear' ? previousRate : stage.rate;
    segments.push({ startS, durationS: stage.durationS, startRate, endRate: stage.rate, cumulativeBefore: cumulative });
    cumulative += (stage.durationS * (startRate + stage.rate)) / 2;
    startS += stage.durationS;
    previousRate = stage.rate;
  }
  return segments;
}

/** Expected number of arrivals over all stages: what `numPrompts` should be to run exactly through them. */
export function expectedStageArrivals(stages: readonly RateStage[]): number {
  checkRateStages(stages);
  const segments = segmentsOf(stages);
  const last = segments[segments.length - 1] as RateSegment;
  return last.cumulativeBefore + (last.durationS * (last.startRate + last.endRate)) / 2;
}

/**
 * Arrivals whose rate follows the stages, by time rescaling: a process with unit-mean gaps is laid out on the
 * cumulative-rate axis Λ(t) and mapped back to time through Λ's inverse. Within a stage the rate is linear in t, so Λ
 * is quadratic there and its inverse has a closed form. With exponential unit gaps this is an inhomogeneous Poisson
 * process. The first arrival comes one unit gap in (not at 0), so a ramp from 0 starts softly. After the last stage
 * arrivals continue at its final rate.
 */
export function createStagedOffsetsMs(stages: readonly RateStage[], count: number, nextUnitGap: () => number): Float64Array {
  checkRateStages(stages);
  const segments = segmentsOf(stages);
  const last = segments[segments.length - 1] as RateSegment;
  const totalCumulative = last.cumulativeBefore + (last.durationS * (last.startRate + last.endRate)) / 2;
  const endS = last.startS + last.durationS;
  const offsetsMs = new Float64Array(count);
  let cumulative = 0;
  let segmentIndex = 0;
  for (let index = 0; index < count; index++) {
    cumulative += nextUnitGap();
    let timeS: number;
    if (cumulative >= totalCumulative) {
      if (!(last.endRate > 0)) {
        throw new ServelabError(
          'INVALID_CONFIG',
          `the stages end at rate 0 after about ${Math.floor(totalCumulative)} arrivals, but ${count} requests were asked for; ` +
            `set numPrompts to ${Math.floor(totalCumulative)} or end the last stage at a rate above 0`,
        );
      }
      timeS = endS + (cumulative - totalCumulative) / last.endRate;
    } else {
      while (segmentIndex + 1 < segments.length && (segments[segmentIndex + 1] as RateSegment).cumulativeBefore <= cumulative) {
        segmentIndex++;
      }
      const segment = segments[segmentIndex] as RateSegment;
      timeS = segment.startS + solveWithinSegment(segment, cumulative - segment.cumulativeBefore);
    }
    offsetsMs[index] = Math.max(timeS * 1000, index > 0 ? (offsetsMs[index - 1] as number) : 0);
  }
  return offsetsMs;
}

/** The time x into a segment at which its cumulative rate r0·x + slope·x²/2 reaches `need`. */
function solveWithinSegment(segment: RateSegment, need: number): number {
  const slope = (segment.endRate - segment.startRate) / segment.durationS;
  const discriminant = Math.max(segment.startRate * segment.startRate + 2 * slope * need, 0);
  // The rationalised root stays accurate when the slope is tiny and is never 0/0 unless need is 0.
  const denominator = segment.startRate + Math.sqrt(discriminant);
  if (denominator === 0) return 0;
  return Math.min((2 * need) / denominator, segment.durationS);
}
