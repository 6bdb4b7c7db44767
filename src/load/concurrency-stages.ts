import { ServelabError } from '../errors/servelab-error.js';
import type { ConcurrencyStage } from '../types/load.js';

/** Rejects stages that cannot drive a closed loop, naming the stage. */
export function checkConcurrencyStages(stages: readonly ConcurrencyStage[]): void {
  if (stages.length === 0) throw new ServelabError('INVALID_CONFIG', 'stages is empty: give at least one {durationS, concurrency}');
  stages.forEach((stage, index) => {
    if (!(stage.durationS > 0) || !Number.isFinite(stage.durationS)) {
      throw new ServelabError('INVALID_CONFIG', `stage ${index}: durationS must be a finite number above 0, got ${String(stage.durationS)}`);
    }
    if (!(Number.isInteger(stage.concurrency) && stage.concurrency >= 0)) {
      throw new ServelabError('INVALID_CONFIG', `stage ${index}: concurrency must be a whole number of at least 0, got ${String(stage.concurrency)}`);
    }
    if (stage.ramp !== undefined && stage.ramp !== 'step' && stage.ramp !== 'linear') {
      throw new ServelabError('INVALID_CONFIG', `stage ${index}: ramp must be "step" or "linear", got ${String(stage.ramp)}`);
    }
  });
}

export function totalStageDurationS(stages: readonly ConcurrencyStage[]): number {
  return stages.reduce((sum, stage) => sum + stage.durationS, 0);
}

/** The number of users that should be active `elapsedS` into the stages (0 once they are over). */
export function usersAt(stages: readonly ConcurrencyStage[], elapsedS: number): number {
  let startS = 0;
  let previous = 0;
  for (const stage of stages) {
    if (elapsedS < startS + stage.durationS) {
      if (stage.ramp !== 'linear') return stage.concurrency;
      const fraction = (elapsedS - startS) / stage.durationS;
      return Math.round(previous + (stage.concurrency - previous) * fraction);
    }
    startS += stage.durationS;
    previous = stage.concurrency;
  }
  return 0;
}
