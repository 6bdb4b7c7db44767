import type { RooflineProfile } from '../../types/engine.js';
import { fitRooflineProfile } from './fit-profile.js';
import type { ProfileFit } from './fit-profile.js';
import { measureServer } from './measure-server.js';
import type { CalibrationMeasurements, CalibrationOptions } from './measure-server.js';
import { ServelabError } from '../../errors/servelab-error.js';

export interface CalibrationResult {
  profile: RooflineProfile;
  fit: ProfileFit;
  measurements: CalibrationMeasurements;
}

/** Measures a server and fits a roofline profile the simulated engine can load (`--profile FILE`). */
export async function calibrateProfile(options: CalibrationOptions & { name?: string; nowIso?: string }): Promise<CalibrationResult> {
  const measurements = await measureServer(options);
  const fit = fitRooflineProfile(measurements.observations);
  if (fit === null) throw new ServelabError('PROTOCOL_ERROR', `no step times could be measured at ${options.url}`);
  const c = fit.coefficients;
  const source = measurements.usedServerTimestamps
    ? 'server timestamps (--enable-metrics: forward_entry_time, prefill_finished_time, request_finished_ts)'
    : 'client-side chunk times (the server did not return --enable-metrics timestamps, so network time is included)';
  const profile: RooflineProfile = {
    kind: 'roofline',
    name: options.name ?? 'calibrated',
    description: `Calibrated from ${options.url} (${measurements.limits.modelPath})${options.nowIso === undefined ? '' : ` on ${options.nowIso}`}.`,
    model: measurements.limits.modelPath,
    hardware: 'measured',
    derivation: [
      `Measured with servelab calibrate: ${measurements.observations.length} step times from ${source}.`,
      'Input-length sweep at batch 1: one prefill step per prompt length (prefill_finished_time - forward_entry_time), then decode at batch 1.',
      'Concurrency sweep: B requests at once at 32- and 512-token prompts; the request prefilled last decodes all its steps at batch B.',
      `Floor-bound steps (within 3% of the fastest) give overhead + floor = ${(c.stepOverheadMs + c.weightsFloorMs).toFixed(3)} ms; a joint non-negative least-squares fit over the ${fit.aboveFloorCount} steps above it gives the overhead (intercept) and the four slopes.`,
      `Fit error over all steps: ${fit.rmsErrorPercent.toFixed(2)}% RMS, ${fit.maxErrorPercent.toFixed(2)}% at worst.`,
    ],
    coefficients: c,
    maxTotalTokens: measurements.limits.maxTotalTokens,
    contextLength: measurements.limits.contextLength,
  };
  return { profile, fit, measurements };
}
