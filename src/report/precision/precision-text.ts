import type { IntervalEstimate, MetricPrecision } from '../../types/summary.js';

/** The headline metrics whose precision a run states, in the terminal's order: summary.json key and label. */
export const PRECISION_METRICS: readonly (readonly [string, string])[] = [
  ['ttftSeconds', 'TTFT'],
  ['tpotSeconds', 'TPOT'],
  ['itlSeconds', 'ITL'],
  ['totalLatencySeconds', 'E2E latency'],
];

/** 1980 → "1,980": counts a reader compares at a glance. */
export function countText(count: number): string {
  return count.toLocaleString('en-US');
}

/** An estimate with its interval in milliseconds: "66.6 [60.1, 79.0]"; only the estimate where there is no interval. */
export function intervalMsText(estimate: IntervalEstimate, format: (seconds: number) => string): string {
  const value = format(estimate.estimate);
  return estimate.low === null || estimate.high === null ? value : `${value} [${format(estimate.low)}, ${format(estimate.high)}]`;
}

/** What a p99 rests on: "p99 from 1,980 requests: the top 20 decide it" (inter-token gaps for ITL). */
export function p99BasisText(precision: MetricPrecision, what: 'requests' | 'gaps'): string {
  const top = precision.p99DecidedByTop;
  return `p99 from ${countText(precision.values)} ${what}: the top ${countText(top)} decide${top === 1 ? 's' : ''} it`;
}
