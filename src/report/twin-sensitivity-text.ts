import { stepErrorPercentText, type SensitivityMetric, type TwinSensitivity } from '../orchestration/virtual-time/twin-sensitivity.js';

/**
 * The twin's sensitivity band in words (extras.twinSensitivity, src/orchestration/virtual-time/twin-sensitivity.ts),
 * for the terminal and report.html: what e was and where it came from, each metric's change at -e and +e, and a
 * warning only where a metric moves past the target.
 */

/** Reads the band from a run's extras; undefined when the run has none (real time, or --twin-sensitivity off). */
export function twinSensitivityOf(extras: Record<string, unknown> | undefined): TwinSensitivity | undefined {
  const value = extras?.['twinSensitivity'];
  return typeof value === 'object' && value !== null && typeof (value as { stepErrorPercent?: unknown }).stepErrorPercent === 'number' ? (value as TwinSensitivity) : undefined;
}

export function signedPercentText(change: number | null): string {
  if (change === null) return 'n/a';
  // Below a twentieth of a percent it is no move (and "-0.0%" would read as one).
  if (Math.abs(change) < 0.05) return '0.0%';
  const rounded = Math.abs(change) < 10 ? change.toFixed(1) : change.toFixed(0);
  return `${change > 0 ? '+' : ''}${rounded}%`;
}

const SOURCE_WORDS = { flag: '--twin-sensitivity', 'profile held-out': "the profile's held-out step error", 'profile fit': "the profile's step error over every measured step (above its held-out one)", assumed: 'assumed: the profile records no step error' } as const;

/** "step times +-2.1% (the profile's held-out step error)". */
export function stepErrorText(band: TwinSensitivity): string {
  return `step times +-${stepErrorPercentText(band.stepErrorPercent)}% (${SOURCE_WORDS[band.source]})`;
}

/** "TTFT p50 -8.0%/+12%". */
export function metricMoveText(metric: SensitivityMetric): string {
  return `${metric.name} ${signedPercentText(metric.minusChangePercent)}/${signedPercentText(metric.plusChangePercent)}`;
}

/**
 * The warning, null when every metric holds within the target: one line naming each metric that moves past it and by
 * how much at worst.
 */
export function twinSensitivityWarning(band: TwinSensitivity): string | null {
  if ('skipped' in band || band.untrusted.length === 0) return null;
  const [first, ...others] = band.untrusted.map((entry) => ({ name: entry.name, worst: Math.abs(entry.worstChangePercent).toFixed(0) }));
  if (first === undefined) return null;
  const rest = others.map((entry) => `, ${entry.name} to better than ${entry.worst}%`).join('');
  return (
    `near capacity: the twin's ${first.name} is not trustworthy to better than ${first.worst}%${rest} ` +
    `(step times +-${stepErrorPercentText(band.stepErrorPercent)}% move ${others.length === 0 ? 'it' : 'them'} past the ${band.targetPercent}% target: queueing amplifies the step error)`
  );
}

/** The terminal's block: a heading line and the metrics' moves, two to a line; or why no band was run. */
export function twinSensitivityLines(band: TwinSensitivity): string[] {
  if ('skipped' in band) return [`Twin sensitivity: ${band.skipped}`];
  const moves = Object.values(band.metrics).map(metricMoveText);
  const lines = [`Twin sensitivity: ${stepErrorText(band)} move`];
  for (let index = 0; index < moves.length; index += 3) lines.push(`  ${moves.slice(index, index + 3).join(', ')}`);
  return lines;
}
