import { readFileSync } from 'node:fs';
import { ServelabError } from '../../errors/servelab-error.js';
import type { ProfileScheduling, ServingLatency } from '../../types/engine.js';
import { CALIBRATED_PATH } from '../profile/path-distribution.js';
import { schedulingSchema, servingPathDistributionSchema } from '../profile/profile-schema.js';
import type { StepObservation } from './fit-profile.js';
import type { CalibrationMeasurements } from './measure-server.js';

const KINDS = new Set(['prefill', 'decode', 'mixed']);

/**
 * Reads what `servelab calibrate --measurements-output FILE` wrote, so that profiles can be fitted again (by a newer
 * servelab, say) without measuring the server again.
 */
export function readMeasurements(path: string): CalibrationMeasurements {
  const refuse = (why: string): never => {
    throw new ServelabError(
      'INVALID_CONFIG',
      `${path} is not a calibration measurements file (${why}); write one with servelab calibrate --measurements-output FILE`,
    );
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return refuse((error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `not JSON: ${(error as Error).message}`);
  }
  const file = parsed as Partial<CalibrationMeasurements> | null;
  if (file === null || typeof file !== 'object' || !Array.isArray(file.observations)) return refuse('no "observations" list');
  const limits = file.limits as unknown as Record<string, unknown> | undefined;
  for (const key of ['maxRunningRequests', 'chunkedPrefillSize', 'contextLength', 'maxTotalTokens']) {
    if (typeof limits?.[key] !== 'number') return refuse(`"limits.${key}" is not a number`);
  }
  file.observations.forEach((observation: Partial<StepObservation>, index) => {
    const where = `observation ${index + 1}`;
    if (!KINDS.has(String(observation.kind))) refuse(`${where} has kind ${JSON.stringify(observation.kind)}, not prefill, decode or mixed`);
    for (const key of ['size', 'secondary', 'stepMs'] as const) {
      const value = observation[key];
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) refuse(`${where}: "${key}" is not a number >= 0`);
    }
    if (observation.kind === 'mixed' && !(typeof observation.prefillTokens === 'number' && observation.prefillTokens > 0)) {
      refuse(`${where} is a mixed step without "prefillTokens"`);
    }
  });
  return {
    limits: { ...(limits as object), modelPath: typeof limits?.['modelPath'] === 'string' ? limits['modelPath'] : 'unknown' } as CalibrationMeasurements['limits'],
    observations: file.observations,
    usedServerTimestamps: file.usedServerTimestamps === true,
    rejectedSamples: typeof file.rejectedSamples === 'number' ? file.rejectedSamples : 0,
    ...(typeof file.settlingRepeats === 'number' ? { settlingRepeats: file.settlingRepeats } : {}),
    ...(Array.isArray(file.concurrencyPromptLengths) && file.concurrencyPromptLengths.every((length: unknown) => typeof length === 'number')
      ? { concurrencyPromptLengths: file.concurrencyPromptLengths as number[] }
      : {}),
    estimatedMs: typeof file.estimatedMs === 'number' ? file.estimatedMs : 0,
    elapsedMs: typeof file.elapsedMs === 'number' ? file.elapsedMs : 0,
    ...(servingLatencyOf(file.servingLatency) ?? {}),
    ...(schedulingOf(file.scheduling) ?? {}),
  };
}

/** The file's scheduling when it has a well-formed one (files written before it was probed have none). */
function schedulingOf(value: unknown): { scheduling: ProfileScheduling } | undefined {
  const parsed = schedulingSchema.safeParse(value);
  return parsed.success ? { scheduling: parsed.data } : undefined;
}

/** The file's serving latency when it has a well-formed one (files written before it was measured have none). */
function servingLatencyOf(value: unknown): { servingLatency: ServingLatency } | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { ingressMs, deliveryMs } = value as Record<string, unknown>;
  const valid = (ms: unknown): ms is number => typeof ms === 'number' && Number.isFinite(ms) && ms >= 0;
  if (!valid(ingressMs) || !valid(deliveryMs)) return undefined;
  // The path's quantiles, in files written since calibration kept them; a malformed one is left out, not refused.
  const distribution = servingPathDistributionSchema.safeParse((value as Record<string, unknown>)['distribution']);
  // Measured as calibration measures it now, whatever the file's age: the network is inside the delivery.
  return { servingLatency: { ingressMs, deliveryMs, ...CALIBRATED_PATH, ...(distribution.success ? { distribution: distribution.data } : {}) } };
}
