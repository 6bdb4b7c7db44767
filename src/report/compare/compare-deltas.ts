import { COMBINED_LATENCIES, latencyValuesOf, type CombinedRepeats } from '../../analysis/bootstrap/combine-repeats.js';
import type { BootstrapStatistic } from '../../analysis/bootstrap/hierarchical-bootstrap.js';
import { bootstrapDifferences, perRunDifference, type DifferenceEstimate } from '../../analysis/bootstrap/repeat-estimates.js';
import type { RunData } from '../../types/run.js';
import type { DerivedColumnName, Summary } from '../../types/summary.js';

/** What the comparison knows of one side: its runs (one, or a repeats directory's repeats) and their summaries. */
export interface ComparedSide {
  runs: readonly RunData[];
  summaries: readonly Summary[];
  /** A repeats directory's combined estimates: the values its column shows for the headline rows. */
  combined?: CombinedRepeats;
}

/** The latencies whose differences get intervals, and the statistics: compare's headline rows. */
const DELTA_LATENCIES: readonly (DerivedColumnName | 'itl')[] = COMBINED_LATENCIES.slice(0, 4);
const DELTA_STATISTICS: readonly BootstrapStatistic[] = ['mean', 'p50', 'p90', 'p99'];

/** Per-run figures whose differences get a t interval when both sides have repeats: the row's name and how to read it. */
const PER_RUN_ROWS: readonly (readonly [string, (summary: Summary) => number | undefined])[] = [
  ['request throughput', (summary) => summary.throughput.requestsPerSecond],
  ['output token throughput', (summary) => summary.throughput.outputTokensPerSecond],
  ['total token throughput', (summary) => summary.throughput.totalTokensPerSecond],
  ['goodput', (summary) => summary.goodput?.requestsPerSecond],
];

/** The comparison table's row name of a latency statistic (`ttft p99`, `itl mean`). */
export function latencyRowName(metric: DerivedColumnName | 'itl', statistic: string): string {
  return `${metric} ${statistic}`;
}

/**
 * Each headline row's difference from the first run, for every other run, with its 95% interval: latencies (ms) by
 * the bootstrap of the difference (two-level where a side has repeats), per-run figures by Welch's t when both sides
 * have two runs or more (else no interval: one run holds no spread of a per-run figure). Keyed by row name; entry i
 * is run i + 1 against run 0.
 */
export function comparisonDeltas(sides: readonly ComparedSide[]): Map<string, (DifferenceEstimate | null)[]> {
  const deltas = new Map<string, (DifferenceEstimate | null)[]>();
  if (sides.length < 2) return deltas;
  const [baseline, ...others] = sides as [ComparedSide, ...ComparedSide[]];
  DELTA_LATENCIES.forEach((metric, index) => {
    const baseValues = baseline.runs.map((run) => latencyValuesOf(run, metric));
    const byStatistic = others.map((side) =>
      bootstrapDifferences(baseValues, side.runs.map((run) => latencyValuesOf(run, metric)), DELTA_STATISTICS, { seed: 1 + index }),
    );
    for (const statistic of DELTA_STATISTICS) {
      deltas.set(
        latencyRowName(metric, statistic),
        byStatistic.map((differences) => {
          const difference = differences.get(statistic);
          return difference === undefined ? null : inMilliseconds(difference);
        }),
      );
    }
  });
  for (const [row, pick] of PER_RUN_ROWS) {
    const values = (side: ComparedSide): number[] => side.summaries.map(pick).filter((value): value is number => value !== undefined);
    deltas.set(row, others.map((side) => perRunDifference(values(baseline), values(side))));
  }
  return deltas;
}

function inMilliseconds(difference: DifferenceEstimate): DifferenceEstimate {
  return { ...difference, estimate: difference.estimate * 1000, low: difference.low === null ? null : difference.low * 1000, high: difference.high === null ? null : difference.high * 1000 };
}

/** "+3.21 [+1.02, +5.40] beyond noise": a difference, its interval, and whether the interval excludes 0. */
export function deltaText(delta: DifferenceEstimate | null | undefined, format: (value: number) => string): string {
  if (delta === null || delta === undefined) return '';
  const signed = (value: number): string => `${value > 0 ? '+' : ''}${format(value)}`;
  if (delta.low === null || delta.high === null) return signed(delta.estimate);
  return `${signed(delta.estimate)} [${signed(delta.low)}, ${signed(delta.high)}] ${delta.beyondNoise ? 'beyond noise' : 'within noise'}`;
}
