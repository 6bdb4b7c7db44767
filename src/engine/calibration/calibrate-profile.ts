import type { MeasuredProfile, ProfileStepError, RooflineProfile, ServingPathDistribution } from '../../types/engine.js';
import { fitRooflineProfile, predictStepMs } from './fit-profile.js';
import type { ProfileFit, StepObservation } from './fit-profile.js';
import { measureServer } from './measure-server.js';
import type { CalibrationMeasurements, CalibrationOptions } from './measure-server.js';
import { betweenSteps, describeBetweenSteps, withBetweenSteps } from './between-steps.js';
import { buildMeasuredTable, predictFromTable } from './measured-table-fit.js';
import { describeRegion, measuredRegion } from './measured-region.js';
import { SLOW_REPEAT_FACTOR, relativeErrors, slowRepeats } from './robust-statistics.js';
import { ServelabError } from '../../errors/servelab-error.js';

/** How well a profile form describes the measured steps: over the points it was made from, and over points it never saw. */
export interface FitQuality {
  fitRmsPercent: number;
  fitMaxPercent: number;
  /** Error of a profile built without the held-out points, on those points (NaN when too few points to hold any out). */
  heldOutRmsPercent: number;
  heldOutMaxPercent: number;
  heldOutCount: number;
}

export interface CalibrationResult {
  profile: RooflineProfile;
  fit: ProfileFit;
  rooflineQuality: FitQuality;
  /** Step times interpolated from the sweep itself; null when the sweep measured no prefill or no decode step. */
  measuredProfile: MeasuredProfile | null;
  measuredQuality: FitQuality | null;
  measurements: CalibrationMeasurements;
  /** The observations as fitted: the measurements' with the engine's time between steps charged (between-steps.ts). */
  observations: StepObservation[];
}

/**
 * Splits observations into points to build from and points to check on: every third point of each kind (prefill,
 * decode at batch 1, decode at larger batches, mixed), never the first or last of its kind, so that checking a table never
 * asks it to extrapolate.
 */
export function holdOutSplit(observations: readonly StepObservation[]): { train: StepObservation[]; heldOut: StepObservation[] } {
  const family = (o: StepObservation): string =>
    o.kind === 'prefill' || o.kind === 'mixed' ? o.kind : o.size === 1 ? 'decode-1' : `decode-${o.secondary / o.size < 256 ? 'short' : 'long'}`;
  const groups = new Map<string, StepObservation[]>();
  for (const observation of observations) groups.set(family(observation), [...(groups.get(family(observation)) ?? []), observation]);
  const heldOut = new Set<StepObservation>();
  for (const members of groups.values()) {
    members.forEach((observation, index) => {
      if (index > 0 && index < members.length - 1 && index % 3 === 1) heldOut.add(observation);
    });
  }
  return { train: observations.filter((o) => !heldOut.has(o)), heldOut: observations.filter((o) => heldOut.has(o)) };
}

function quality(
  observations: readonly StepObservation[],
  build: (points: readonly StepObservation[]) => ((o: StepObservation) => number) | null,
): FitQuality | null {
  const full = build(observations);
  if (full === null) return null;
  const fitted = relativeErrors(observations.map((o) => ({ measuredMs: o.stepMs, predictedMs: full(o) })));
  const { train, heldOut } = holdOutSplit(observations);
  const partial = heldOut.length === 0 ? null : build(train);
  const checked =
    partial === null ? { rmsPercent: Number.NaN, maxPercent: Number.NaN } : relativeErrors(heldOut.map((o) => ({ measuredMs: o.stepMs, predictedMs: partial(o) })));
  return {
    fitRmsPercent: fitted.rmsPercent,
    fitMaxPercent: fitted.maxPercent,
    heldOutRmsPercent: checked.rmsPercent,
    heldOutMaxPercent: checked.maxPercent,
    heldOutCount: partial === null ? 0 : heldOut.length,
  };
}

/** Fits both profile forms to measured steps and says how well each describes them. */
export function fitBothForms(observations: readonly StepObservation[]): {
  fit: ProfileFit | null;
  rooflineQuality: FitQuality | null;
  table: ReturnType<typeof buildMeasuredTable>;
  measuredQuality: FitQuality | null;
} {
  const fit = fitRooflineProfile(observations);
  const rooflineQuality = quality(observations, (points) => {
    const partial = fitRooflineProfile(points);
    // A held-out split can leave too few steps above the floor to fit the slopes where all of them sufficed: a check of
    // that plateau-only profile would report its failure as the form's error, so no points are held out then.
    if (partial === null || (!partial.solved && fit?.solved === true)) return null;
    return (o) => predictStepMs(partial.coefficients, o);
  });
  // The table is read with the fitted form's floor (floor-lift.ts), as the twin reads it; a held-out check fits the
  // form again without the held-out points, so that they reach neither.
  const table = buildMeasuredTable(observations, fit?.coefficients);
  const measuredQuality = quality(observations, (points) => {
    const form = fitRooflineProfile(points)?.coefficients;
    const partial = buildMeasuredTable(points, form);
    return partial === null ? null : (o) => predictFromTable(partial, o, form);
  });
  return { fit, rooflineQuality, table, measuredQuality };
}

/** The profile's own record of its step error (what describeQuality says in prose), for the twin's sensitivity band. */
function stepErrorOf(quality: FitQuality): ProfileStepError {
  const round = (value: number): number => Math.round(value * 1e4) / 1e4;
  const heldOut = quality.heldOutCount > 0 && Number.isFinite(quality.heldOutRmsPercent);
  return {
    fitRmsPercent: round(quality.fitRmsPercent),
    fitMaxPercent: round(quality.fitMaxPercent),
    heldOutRmsPercent: heldOut ? round(quality.heldOutRmsPercent) : null,
    heldOutMaxPercent: heldOut ? round(quality.heldOutMaxPercent) : null,
    heldOutSteps: quality.heldOutCount,
  };
}

function describeQuality(quality: FitQuality): string {
  const heldOut =
    quality.heldOutCount === 0
      ? 'no points could be held out'
      : `${quality.heldOutRmsPercent.toFixed(2)}% RMS (${quality.heldOutMaxPercent.toFixed(2)}% at worst) on ${quality.heldOutCount} held-out steps`;
  return `Fit error over all steps: ${quality.fitRmsPercent.toFixed(2)}% RMS, ${quality.fitMaxPercent.toFixed(2)}% at worst; ${heldOut}.`;
}

/** Measures a server and fits a roofline profile the simulated engine can load (`--profile FILE`), and a measured table. */
export async function calibrateProfile(
  options: CalibrationOptions & {
    name?: string;
    nowIso?: string;
    /** Fit these (from `--measurements-output`) instead of measuring; `url` then only names where they came from. */
    measurements?: CalibrationMeasurements;
  },
): Promise<CalibrationResult> {
  const measurements = options.measurements ?? (await measureServer(options));
  // Only where the probe's step is the streams' step too: on a server that runs prefill apart, the streams' interval
  // across the probe holds a decode step and two gaps besides it, and no reading is taken.
  const mixing = measurements.scheduling?.mixedChunk === true;
  const between = mixing ? betweenSteps(measurements.observations) : null;
  const observations = withBetweenSteps(measurements.observations, between);
  const { fit, rooflineQuality, table, measuredQuality } = fitBothForms(observations);
  if (fit === null || rooflineQuality === null) throw new ServelabError('PROTOCOL_ERROR', `no step times could be measured at ${options.url}`);
  const c = fit.coefficients;
  const source = measurements.usedServerTimestamps
    ? 'server timestamps (--enable-metrics: forward_entry_time, prefill_finished_time, request_finished_ts)'
    : 'client-side chunk times (the server did not return --enable-metrics timestamps, so network time is included)';
  const repeats =
    options.measurements === undefined
      ? (options.repeats ?? 2)
      : Math.max(1, ...measurements.observations.map((observation) => observation.samplesMs?.length ?? 1));
  const measuredLine = `Measured with servelab calibrate: ${measurements.observations.length} step times from ${source}; each the median of ${repeats} repeat(s) within 3.5 MADs (${measurements.rejectedSamples} outlying sample(s) left out).`;
  const latency = measurements.servingLatency === undefined ? {} : { servingLatency: measurements.servingLatency };
  const latencyLine =
    measurements.servingLatency === undefined
      ? []
      : [
          `Serving latency on the idle server (medians of the path probe and the batch-1 sweep, one request at a time): ingress ${measurements.servingLatency.ingressMs.toFixed(2)} ms (request_received_ts to forward_entry_time), delivery ${measurements.servingLatency.deliveryMs.toFixed(2)} ms (the client's request time beyond the server's request_received_ts to request_finished_ts: HTTP, detokenizer hops, network). ${describePathDistribution(measurements.servingLatency.distribution)}`,
        ];
  const stalls = describeSlowRepeats(measurements.observations);
  const notes = [...latencyLine, ...(stalls === null ? [] : [`Slow repeats: ${stalls}.`])];
  const region = measuredRegion(measurements.observations);
  const scheduling = measurements.scheduling;
  const calibratedParts = { ...(scheduling === undefined ? {} : { scheduling }), ...(region === null ? {} : { region }) };
  const calibratedLines = [
    ...(scheduling === undefined
      ? []
      : [
          `Scheduling: ${scheduling.mixedChunk ? 'prefill chunks share steps with decoding (mixed chunk)' : 'prefill steps apart from decode steps'}; chunk ${scheduling.chunkedPrefillSize} tokens, ${scheduling.maxRunningRequests} running requests, ${scheduling.maxTotalTokens} KV tokens${scheduling.pageSize === undefined ? '' : ` in pages of ${scheduling.pageSize}`} (${scheduling.source}). The twin schedules so unless told otherwise.`,
        ]),
    ...(region === null ? [] : [describeRegion(region)]),
  ];
  const description = `Calibrated from ${options.url} (${measurements.limits.modelPath})${options.nowIso === undefined ? '' : ` on ${options.nowIso}`}.`;
  const profile: RooflineProfile = {
    kind: 'roofline',
    name: options.name ?? 'calibrated',
    description,
    model: measurements.limits.modelPath,
    hardware: 'measured',
    derivation: [
      measuredLine,
      'Input-length sweep at batch 1: one prefill step per prompt length (prefill_finished_time - forward_entry_time), then decode at batch 1.',
      `Concurrency sweep: B requests at once at ${describeTokenLengths(measurements.concurrencyPromptLengths)}, run with N and then N + K tokens each, N enough that all B decode together: the K extra steps of the requests prefilled last all run at batch B.`,
      `Floor-bound steps (within 3% of the fastest) give overhead + floor = ${(c.stepOverheadMs + c.weightsFloorMs).toFixed(3)} ms; a joint non-negative least-squares fit over the ${fit.aboveFloorCount} steps above it gives the overhead (intercept) and the four slopes.`,
      describeBetweenSteps(between, mixing),
      describeQuality(rooflineQuality),
      ...notes,
      ...calibratedLines,
    ],
    coefficients: c,
    maxTotalTokens: measurements.limits.maxTotalTokens,
    contextLength: measurements.limits.contextLength,
    ...latency,
    ...calibratedParts,
    stepError: stepErrorOf(rooflineQuality),
  };
  const measuredProfile: MeasuredProfile | null =
    table === null || measuredQuality === null
      ? null
      : {
          kind: 'measured',
          name: `${options.name ?? 'calibrated'}-measured`,
          description,
          model: measurements.limits.modelPath,
          hardware: 'measured',
          derivation: [
            measuredLine,
            'Step times interpolated from the sweep itself: prefill steps by prompt tokens; decode steps by batch size and KV tokens read (piecewise linear through each batch size\'s points, past the last at their mean slope); a mixed step is decode + prefill - the fixed cost, plus what the measured mixed steps cost beyond that, interpolated over prompt tokens and KV tokens. Between points the table is read less the fitted form\'s floor lift (max(0, floor - work)) and the lift added back, so that a line between a step on the floor and one past its knee bends at the knee.',
            describeBetweenSteps(between, mixing),
            `${describeQuality(measuredQuality)} The table passes through its own points, so the held-out error is the one that tells.`,
            'Past the table\'s last point on an axis, a step is the table at its edge plus what the fitted roofline form (fallback) adds from the edge to the step.',
            ...notes,
            ...calibratedLines,
          ],
          table,
          fallback: c,
          maxTotalTokens: measurements.limits.maxTotalTokens,
          contextLength: measurements.limits.contextLength,
          ...latency,
          ...calibratedParts,
          stepError: stepErrorOf(measuredQuality),
        };
  return { profile, fit, rooflineQuality, measuredProfile, measuredQuality, measurements, observations };
}

/** What the twin does with the path: a constant, or each request's delivery drawn from the measured quantiles. */
export function describePathDistribution(distribution: ServingPathDistribution | undefined): string {
  if (distribution === undefined) return 'The virtual-time twin adds both to every request.';
  const at = (values: readonly number[]): string =>
    distribution.quantiles.map((p, index) => `p${Math.round(p * 100)} ${(values[index] as number).toFixed(2)}`).join(', ');
  return (
    `Delivery over ${distribution.deliverySamples} requests: ${at(distribution.deliveryMs)} ms; ` +
    `ingress over ${distribution.ingressSamples}: ${at(distribution.ingressMs)} ms. The virtual-time twin of a node test draws each request's delivery from these quantiles (seeded by the run's seed) and adds ingress's median.`
  );
}

/** "32-, 128- and 512-token prompts"; files from before the lengths were recorded say only "several prompt lengths". */
function describeTokenLengths(lengths: readonly number[] | undefined): string {
  if (lengths === undefined || lengths.length === 0) return 'several prompt lengths';
  const named = lengths.map((length) => `${length}-`);
  const listed = named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} and ${named[named.length - 1]}`;
  return `${listed}token prompts`;
}

/** The points with a stalled repeat (see slowRepeats) in one sentence, or null when there are none. */
export function describeSlowRepeats(observations: readonly StepObservation[]): string | null {
  const stalled = slowRepeats(observations);
  if (stalled.length === 0) return null;
  const points = stalled.map((o) => `${o.label}: ${Math.max(...(o.samplesMs ?? [])).toFixed(1)} against ${o.stepMs.toFixed(1)} ms`);
  return (
    `${stalled.length} point${stalled.length === 1 ? '' : 's'} had a repeat at least ${SLOW_REPEAT_FACTOR}x the figure kept (${points.join('; ')}); ` +
    'if such stalls recur under load, the server is slower there than either profile says'
  );
}
