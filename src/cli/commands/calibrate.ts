import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { calibrateProfile, describeSlowRepeats } from '../../engine/calibration/calibrate-profile.js';
import { calibrateFromRuns } from './calibrate-from-runs.js';
import { readMeasurements } from '../../engine/calibration/read-measurements.js';
import { predictStepMs } from '../../engine/calibration/fit-profile.js';
import { predictFromTable } from '../../engine/calibration/measured-table-fit.js';
import { relativeErrors } from '../../engine/calibration/robust-statistics.js';
import { ServelabError } from '../../errors/servelab-error.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import type { CalibrationForecast } from '../../engine/calibration/sweep-plan.js';
import { describeProfileValidation, describeValidation, forecastValidationSeconds, validateProfiles } from '../../experiments/validate-profiles.js';
import { refitFromValidation } from '../../experiments/validation-refit.js';
import { valueAt } from '../../engine/profile/path-distribution.js';
import type { ServingPathDistribution } from '../../types/engine.js';

interface CalibrateFlags {
  url?: string;
  fromMeasurements?: string;
  fromRuns?: string[];
  profile?: string;
  maxRunningRequests?: number;
  chunkedPrefillSize?: number;
  maxTotalTokens?: number;
  pageSize?: number;
  output: string;
  measuredOutput?: string;
  measurementsOutput?: string;
  name?: string;
  decodeTokens: number;
  repeats: number;
  maxBatch?: number;
  kvPromptLengths?: number[];
  mixedSweep: boolean;
  validate: boolean;
  refit: boolean;
  validationSeconds: number;
  validationLoads: number[];
  validationDir?: string;
  quiet?: boolean;
}

function integerAtLeast(flag: string, minimum: number) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!/^\d+$/.test(value.trim()) || parsed < minimum) {
      throw new InvalidArgumentError(`${flag} must be an integer >= ${minimum}, got "${value}".`);
    }
    return parsed;
  };
}

function tokenList(flag: string) {
  return (value: string): number[] => {
    const parts = value.split(',').map((part) => part.trim());
    if (parts.length === 0 || parts.some((part) => !/^\d+$/.test(part) || Number(part) < 1)) {
      throw new InvalidArgumentError(`${flag} must be whole token counts >= 1 separated by commas (e.g. 32,128,256,512), got "${value}".`);
    }
    return parts.map(Number);
  };
}

/**
 * `--validation-loads`: shares of the predicted capacity, each above 0 and at most 1.5 (past the capacity a twin and a
 * server both pile up a queue as long as the run, which says little of either).
 */
function loadShares(value: string): number[] {
  const parts = value.split(',').map((part) => part.trim());
  const shares = parts.map(Number);
  if (parts.some((part) => part === '') || shares.some((share) => !Number.isFinite(share) || share <= 0 || share > 1.5)) {
    throw new InvalidArgumentError(`--validation-loads must be shares of the predicted capacity above 0 and at most 1.5, separated by commas (e.g. 0.2,0.5,0.8,0.95), got "${value}".`);
  }
  return shares;
}

/** `servelab calibrate`: measure a running server and fit a profile for the simulated engine. */
export function registerCalibrateCommand(program: Command): void {
  program
    .command('calibrate')
    .description(
      'Measure a running SGLang server (an input-length sweep at batch 1 and a concurrency sweep) and fit a cost-model ' +
        'profile for the simulated engine, so simulations behave like that server.',
    )
    .exitOverride()
    .option('--url <url>', 'base URL of the server to measure (launch SGLang with --enable-metrics for exact step times)')
    .option(
      '--from-measurements <file>',
      'fit again from a file --measurements-output wrote, instead of measuring a server (no GPU needed; a newer servelab may fit better)',
    )
    .option(
      '--from-runs <dirs...>',
      "fit (or refit, with --profile) a profile to recorded runs (servelab node's run directories, with server timing): each is replayed in virtual time and the step costs moved until the replay matches the records; with two or more, the last is held out and its error printed",
    )
    .option('--profile <name|file>', '--from-runs: the profile to refit (default: a roofline fitted to the step times the records show)')
    .option('--max-running-requests <n>', "--from-runs: the server's max_running_requests (runs on --target sim record it)", integerAtLeast('--max-running-requests', 1))
    .option('--chunked-prefill-size <n>', "--from-runs: the server's chunked_prefill_size", integerAtLeast('--chunked-prefill-size', 1))
    .option('--max-total-tokens <n>', "--from-runs: the server's max_total_tokens (its KV pool)", integerAtLeast('--max-total-tokens', 1))
    .option('--page-size <n>', "--from-runs: the server's page_size (default: the runs' or the start profile's, else 1)", integerAtLeast('--page-size', 1))
    .requiredOption('--output <file>', 'where to write the fitted profile (JSON; load it with --profile FILE)')
    .option('--measured-output <file>', 'also write a measured profile: step times interpolated from the sweep (for engines the roofline form does not describe)')
    .option('--measurements-output <file>', 'also write every measured step (with its repeated samples) and the server\'s limits as JSON')
    .option('--name <name>', 'name recorded in the profile', 'calibrated')
    .option('--decode-tokens <n>', 'tokens generated per request', integerAtLeast('--decode-tokens', 3), 16)
    .option('--repeats <n>', 'repetitions of every point (the median of the repeats, outliers beyond 3.5 MADs left out)', integerAtLeast('--repeats', 1), 2)
    .option('--max-batch <n>', 'largest batch of the concurrency sweep (default: the server\'s max_running_requests, at most 512)', integerAtLeast('--max-batch', 1))
    .option(
      '--kv-prompt-lengths <list>',
      'prompt lengths (tokens, comma-separated) of the concurrency sweep: they set the KV tokens its decode steps read, and so where the measured table has KV points; add lengths where your server\'s step time may jump with KV (default: 32,128,256,512)',
      tokenList('--kv-prompt-lengths'),
    )
    .option(
      '--no-mixed-sweep',
      'skip the mixed steps (a prompt sent while a batch decodes: on servers that mix prefill into the running batch, such as SGLang with --enable-mixed-chunk, they cost more than their parts, and only the measured profile can say how much)',
    )
    .option(
      '--no-validate',
      'skip the end-to-end check (after fitting, the server under a short open-loop load at a light rate and near the predicted capacity, the twin on the same workload in virtual time, its error per profile)',
    )
    .option(
      '--refit',
      'after the validation, refit the recommended profile to the validation\'s own server runs (what the server cost under load, which the idle sweep cannot see), check each rate with a refit fitted without that rate\'s run, and recommend the refit only where it is closer there (three rates or more: --validation-loads 0.2,0.5,0.8)',
      false,
    )
    .option('--validation-seconds <n>', 'seconds of arrivals at each of the validation\'s rates', integerAtLeast('--validation-seconds', 2), 15)
    .option(
      '--validation-loads <shares>',
      'the validation\'s rates as shares of the capacity the profiles predict, comma-separated; each adds a run against the server (e.g. 0.2,0.5,0.8,0.95 checks the range a twin is most often used over; near 1 a twin is as good as its step times to about 1%)',
      loadShares,
      [0.2, 0.8],
    )
    .option('--validation-dir <dir>', 'where the validation\'s runs go (default: beside --output, named after it with -validation)')
    .option('--quiet', 'print only the summary')
    .addHelpText(
      'after',
      [
        '',
        'The fit: stepMs = stepOverheadMs + max(weightsFloorMs, prefillPerTokenMs x tokens + prefillAttentionPerPairMs x pairs',
        '                                        + decodePerSequenceMs x batch + kvReadPerTokenMs x KV tokens read).',
        'It prints each coefficient and the fit error. Example:',
        '  servelab calibrate --url http://127.0.0.1:30000 --output my-gpu.json --measurements-output my-gpu-steps.json',
        '  servelab calibrate --from-measurements my-gpu-steps.json --output my-gpu.json   # fit again, no server',
        '  servelab calibrate --from-runs runs/8rps runs/12rps runs/16rps --profile my-gpu.json --output my-gpu-refit.json \\',
        '    --max-running-requests 64 --chunked-prefill-size 8192 --max-total-tokens 400000   # refit to runs; runs/16rps held out',
        '  servelab sim-server --profile my-gpu.json --port 30001',
      ].join('\n'),
    )
    .action(async (flags: CalibrateFlags) => {
      const sources = [flags.url, flags.fromMeasurements, flags.fromRuns].filter((source) => source !== undefined).length;
      if (sources !== 1) {
        throw new ServelabError(
          'INVALID_CONFIG',
          'calibrate needs exactly one of --url URL (measure a running server), --from-measurements FILE (fit again from a file --measurements-output wrote) and --from-runs DIR... (fit to recorded runs).',
        );
      }
      if (flags.fromRuns !== undefined) {
        await calibrateFromRuns({ ...flags, fromRuns: flags.fromRuns });
        return;
      }
      const measurements = flags.fromMeasurements === undefined ? undefined : readMeasurements(flags.fromMeasurements);
      const batchSizes =
        flags.maxBatch === undefined ? undefined : [2, 4, 8, 16, 32, 64, 128, 256, 512].filter((batch) => batch <= (flags.maxBatch as number));
      const result = await calibrateProfile({
        url: flags.url ?? `measurements in ${flags.fromMeasurements as string}`,
        ...(measurements === undefined ? {} : { measurements }),
        name: flags.name,
        decodeTokens: flags.decodeTokens,
        repeats: flags.repeats,
        mixedSweep: flags.mixedSweep,
        ...(batchSizes === undefined ? {} : { batchSizes }),
        ...(flags.kvPromptLengths === undefined ? {} : { concurrencyPromptLengths: flags.kvPromptLengths }),
        nowIso: new Date().toISOString(),
        onProgress: flags.quiet === true ? undefined : (message) => process.stdout.write(`  ${message}\n`),
      });
      await writeFileAtomic(flags.output, `${JSON.stringify(result.profile, null, 2)}\n`);
      if (flags.measuredOutput !== undefined && result.measuredProfile !== null) {
        await writeFileAtomic(flags.measuredOutput, `${JSON.stringify(result.measuredProfile, null, 1)}\n`);
      }
      if (flags.measurementsOutput !== undefined) {
        await writeFileAtomic(flags.measurementsOutput, `${JSON.stringify(result.measurements, null, 1)}\n`);
      }
      const c = result.profile.coefficients;
      const q = result.rooflineQuality;
      const mixed = result.observations.filter((o) => o.kind === 'mixed');
      const mixedError = (predict: (o: (typeof mixed)[number]) => number): string =>
        `${relativeErrors(mixed.map((o) => ({ measuredMs: o.stepMs, predictedMs: predict(o) }))).rmsPercent.toFixed(1)}% RMS`;
      const table = result.measuredProfile?.table;
      const mixedLine =
        mixed.length === 0
          ? []
          : [
              `  mixed steps: ${mixed.length} measured; the roofline profile is off by ${mixedError((o) => predictStepMs(c, o))} on them` +
                (table === undefined ? '' : `, the measured table by ${mixedError((o) => predictFromTable(table, o, result.measuredProfile?.fallback))}`),
            ];
      const m = result.measuredQuality;
      const latency = result.measurements.servingLatency;
      const stalls = describeSlowRepeats(result.measurements.observations);
      const stallLine = stalls === null ? [] : [`  slow repeats: ${stalls}`];
      const quality = (label: string, value: typeof q): string =>
        `  ${label}: fit ${value.fitRmsPercent.toFixed(2)}% RMS (${value.fitMaxPercent.toFixed(2)}% max); held out ` +
        (value.heldOutCount === 0 ? 'none (too few points)' : `${value.heldOutRmsPercent.toFixed(2)}% RMS (${value.heldOutMaxPercent.toFixed(2)}% max) on ${value.heldOutCount} steps the fit did not see`);
      process.stdout.write(
        [
          `Fitted profile written to ${flags.output}`,
          `  stepOverheadMs            ${c.stepOverheadMs.toPrecision(4)}`,
          `  weightsFloorMs            ${c.weightsFloorMs.toPrecision(4)}`,
          `  prefillPerTokenMs         ${c.prefillPerTokenMs.toPrecision(4)}`,
          `  prefillAttentionPerPairMs ${c.prefillAttentionPerPairMs.toPrecision(4)}`,
          `  decodePerSequenceMs       ${c.decodePerSequenceMs.toPrecision(4)}`,
          `  kvReadPerTokenMs          ${c.kvReadPerTokenMs.toPrecision(4)}`,
          quality('roofline error', q) +
            (result.measurements.usedServerTimestamps ? '' : ' (client-side timing: add --enable-metrics to the server for exact step times)'),
          ...(m === null ? [] : [quality('measured table error', m)]),
          ...mixedLine,
          ...(latency === undefined
            ? []
            : [`  serving latency (idle server): ingress ${latency.ingressMs.toFixed(2)} ms, delivery ${latency.deliveryMs.toFixed(2)} ms; ${
                latency.distribution === undefined
                  ? 'the virtual-time twin adds both'
                  : `delivery p50 ${pathAt(latency.distribution, 0.5)} ms, p90 ${pathAt(latency.distribution, 0.9)} ms, p99 ${pathAt(latency.distribution, 0.99)} ms over ${latency.distribution.deliverySamples} requests; the virtual-time twin draws each request's delivery from them`
              }`]),
          ...stallLine,
          ...(flags.measuredOutput === undefined || result.measuredProfile === null ? [] : [`Measured profile written to ${flags.measuredOutput}`]),
          `  ${result.measurements.observations.length} steps in ${(result.measurements.elapsedMs / 1000).toFixed(1)} s ` +
            `(forecast ${(result.measurements.estimatedMs / 1000).toFixed(0)} s); ${result.measurements.rejectedSamples} outlying samples left out` +
            (result.measurements.settlingRepeats ? `; ${result.measurements.settlingRepeats} points took a third repeat, their first two disagreeing by 1.3x or more` : ''),
          ...partsLine(result.measurements),
          '',
        ].join('\n'),
      );
      if (flags.url === undefined || !flags.validate) return;
      const profiles = [
        ...(result.measuredProfile === null || flags.measuredOutput === undefined ? [] : [{ label: 'measured', profile: result.measuredProfile, file: flags.measuredOutput }]),
        { label: 'roofline', profile: result.profile, file: flags.output },
      ];
      const validationDir = flags.validationDir ?? `${flags.output.replace(/\.json$/i, '')}-validation`;
      const validationForecastS = forecastValidationSeconds({ secondsPerRate: flags.validationSeconds, loadShares: flags.validationLoads, profiles: profiles.length });
      process.stdout.write(`Validation will take about ${validationForecastS} s (--no-validate skips it); runs in ${validationDir}\n`);
      const validationStartedMs = performance.now();
      const validation = await validateProfiles({
        url: flags.url,
        profiles,
        outputDir: validationDir,
        secondsPerRate: flags.validationSeconds,
        loadShares: flags.validationLoads,
        onProgress: flags.quiet === true ? undefined : (message) => process.stdout.write(`  ${message}\n`),
      });
      for (const { label, validation: measured } of validation.profiles) {
        const entry = profiles.find((candidate) => candidate.label === label);
        if (entry === undefined) continue;
        await writeFileAtomic(entry.file, `${JSON.stringify({ ...entry.profile, validation: measured }, null, entry.label === 'measured' ? 1 : 2)}\n`);
      }
      const recommended = profiles.find((candidate) => candidate.label === validation.recommended) ?? profiles[0];
      process.stdout.write(
        [
          ...describeValidation(validation),
          `  use --profile ${recommended?.file ?? validation.recommended}; each profile file now carries its validation.`,
          `  validation took ${((performance.now() - validationStartedMs) / 1000).toFixed(1)} s (forecast ${validation.forecastSeconds} s once the rates were known, ${validationForecastS} s before)`,
          '',
        ].join('\n'),
      );
      if (!flags.refit || recommended === undefined) return;
      const recommendedValidation = validation.profiles.find((candidate) => candidate.label === recommended.label)?.validation;
      const limits = result.measurements.limits;
      const refitStartedMs = performance.now();
      const outcome = await refitFromValidation({
        validation,
        start: { label: recommended.label, profile: recommended.profile },
        limits: {
          maxRunningRequests: limits.maxRunningRequests,
          chunkedPrefillSize: limits.chunkedPrefillSize,
          maxTotalTokens: limits.maxTotalTokens,
          ...(limits.pageSize === undefined ? {} : { pageSize: limits.pageSize }),
        },
        nowIso: new Date().toISOString(),
        onProgress: flags.quiet === true ? undefined : (message) => process.stdout.write(`  ${message}\n`),
      });
      if ('skipped' in outcome) {
        process.stdout.write(`Refit to the validation runs skipped: ${outcome.skipped}\n`);
        return;
      }
      const { refit } = outcome;
      const refitFile = `${recommended.file.replace(/\.json$/i, '')}-refit.json`;
      await writeFileAtomic(refitFile, `${JSON.stringify(refit.profile, null, refit.profile.kind === 'measured' ? 1 : 2)}\n`);
      const refitRms = refit.check.validation.rmsErrorPercent ?? Number.POSITIVE_INFINITY;
      const startRms = recommendedValidation?.rmsErrorPercent ?? Number.POSITIVE_INFINITY;
      process.stdout.write(
        [
          `Refit of ${recommended.label} to the validation's server runs (what the server cost under load); each rate checked by a refit fitted without that rate's run:`,
          ...describeProfileValidation(refit.check),
          `  factors: ${Object.entries(refit.factors).map(([knob, factor]) => `${knob} x${factor.toFixed(3)}`).join(', ')}; scheduling: ${refit.enableMixedChunk ? 'prefill mixed into decode steps' : 'prefill steps apart from decode steps'}`,
          `Refit profile written to ${refitFile} (fitted on every validation run; ${((performance.now() - refitStartedMs) / 1000).toFixed(1)} s)`,
          refitRms < startRms
            ? `Recommended: ${refit.label} (RMS ${refitRms.toFixed(1)}% on rates its fit did not see, against ${startRms.toFixed(1)}%); use --profile ${refitFile}`
            : `Recommended: still ${recommended.label} (the refit's RMS on rates its fit did not see, ${refitRms.toFixed(1)}%, is not below its ${startRms.toFixed(1)}%); use --profile ${recommended.file}`,
          '',
        ].join('\n'),
      );
    });
}

const PART_NAMES: Record<string, string> = { schedulingMs: 'scheduling probe', batchOneMs: 'batch-1 sweep', concurrencyMs: 'batch sweep', mixedMs: 'mixed steps' };

/** Each part of the sweep: what it took against its forecast (s), to see which part a forecast misses. */
function partsLine(measurements: { forecastByPartMs?: CalibrationForecast; elapsedByPartMs?: Record<string, number> }): string[] {
  const forecast: Record<string, number> | undefined = measurements.forecastByPartMs === undefined ? undefined : { ...measurements.forecastByPartMs };
  const elapsed = measurements.elapsedByPartMs;
  if (forecast === undefined || elapsed === undefined) return [];
  const parts = Object.keys(PART_NAMES)
    // A part that was not run (no mixed steps, no scheduling probe) has no forecast and took no time: left out.
    .filter((part) => elapsed[part] !== undefined && ((forecast[part] ?? 0) > 0 || (elapsed[part] as number) >= 50))
    .map((part) => `${PART_NAMES[part]} ${((elapsed[part] as number) / 1000).toFixed(1)} s (forecast ${((forecast[part] ?? 0) / 1000).toFixed(1)})`);
  return parts.length === 0 ? [] : [`  by part: ${parts.join(', ')}`];
}

/** The measured delivery at probability `p`, for the terminal. */
function pathAt(distribution: ServingPathDistribution, p: number): string {
  return valueAt(distribution.quantiles, distribution.deliveryMs, p).toFixed(2);
}
