import { loadProfile } from '../../engine/profile/load-profile.js';
import { REPLAY_METRIC_NAMES, type ReplayMetrics } from '../../engine/calibration/replay-error.js';
import { describeWorst, refitFromRuns } from '../../engine/calibration/refit-from-runs.js';
import { readRecordedRun } from '../../engine/calibration/run-records.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';

export interface FromRunsFlags {
  fromRuns: string[];
  output: string;
  profile?: string;
  name?: string;
  maxRunningRequests?: number;
  chunkedPrefillSize?: number;
  maxTotalTokens?: number;
  pageSize?: number;
  quiet?: boolean;
}

/** `servelab calibrate --from-runs DIR...`: a profile fitted (or refitted) to recorded runs, and its held-out error. */
export async function calibrateFromRuns(flags: FromRunsFlags): Promise<void> {
  const runs = flags.fromRuns.map(readRecordedRun);
  const result = refitFromRuns({
    runs,
    ...(flags.profile === undefined ? {} : { profile: loadProfile(flags.profile) }),
    limits: {
      ...(flags.maxRunningRequests === undefined ? {} : { maxRunningRequests: flags.maxRunningRequests }),
      ...(flags.chunkedPrefillSize === undefined ? {} : { chunkedPrefillSize: flags.chunkedPrefillSize }),
      ...(flags.maxTotalTokens === undefined ? {} : { maxTotalTokens: flags.maxTotalTokens }),
      ...(flags.pageSize === undefined ? {} : { pageSize: flags.pageSize }),
    },
    name: flags.name ?? 'refit',
    nowIso: new Date().toISOString(),
    onProgress: flags.quiet === true ? undefined : (message) => process.stdout.write(`  ${message}\n`),
  });
  await writeFileAtomic(flags.output, `${JSON.stringify(result.profile, null, result.profile.kind === 'measured' ? 1 : 2)}\n`);
  const skipped = runs.reduce((sum, run) => sum + run.skipped, 0);
  const lines = [
    `Refit ${result.profile.kind} profile written to ${flags.output}`,
    `  fitted on ${result.fittedRequests} requests (${runs.length >= 2 ? runs.slice(0, -1).map((run) => run.directory).join(', ') : runs[0]?.directory})` +
      (skipped > 0 ? `; ${skipped} requests left out (failed, or without the server's timing stamps)` : ''),
    `  started from ${flags.profile === undefined ? 'a roofline fitted to the step times the records show' : flags.profile}; factors: ` +
      Object.entries(result.factors).map(([knob, factor]) => `${knob} x${factor.toFixed(3)}`).join(', '),
    `  replay error (mean squared log ratio of server TTFT and TPOT, request by request): ${result.startObjective.toFixed(4)} before, ${result.refitObjective.toFixed(4)} after`,
    `  scheduling: ${result.enableMixedChunk ? 'prefill mixed into decode steps fits best: run the twin with --enable-mixed-chunk' : 'prefill steps apart from decode steps fits best (no --enable-mixed-chunk)'}` +
      ` (${result.refitObjective.toFixed(4)} against ${result.otherModeObjective.toFixed(4)} the other way)`,
  ];
  lines.push(
    `  fitted runs, worst server-side error of the refit (in sample): ` +
      result.fittedErrors.map((check) => `${check.directory} ${describeWorst(check.errorsPercent)}`).join('; '),
  );
  const held = result.heldOut;
  if (held === null) {
    lines.push('  no run held out (give two or more: the last is held out), so the error on a run the fit did not see is unknown');
  } else {
    lines.push(`  held out ${held.directory} (${held.requests} requests, not fitted); server-side, real / start profile / refit:`);
    for (const key of Object.keys(REPLAY_METRIC_NAMES) as (keyof ReplayMetrics)[]) {
      const unit = key === 'throughputRps' ? 'req/s' : 'ms';
      const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(1)}%`;
      lines.push(
        `    ${REPLAY_METRIC_NAMES[key].padEnd(10)} ${held.real[key].toFixed(2)} / ${held.start[key].toFixed(2)} (${signed(held.startErrorsPercent[key])}) / ` +
          `${held.refit[key].toFixed(2)} (${signed(held.refitErrorsPercent[key])}) ${unit}`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
