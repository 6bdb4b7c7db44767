import type { SeededRandom } from '../../utils/random.js';
import { percentileOfSorted } from '../statistics.js';

/** What a bootstrap estimates of one metric: its mean or a percentile (numpy's linear one). */
export type BootstrapStatistic = 'mean' | 'p50' | 'p90' | 'p99';

export const BOOTSTRAP_STATISTICS: readonly BootstrapStatistic[] = ['mean', 'p50', 'p90', 'p99'];

const PERCENTILE_OF: Readonly<Record<Exclude<BootstrapStatistic, 'mean'>, number>> = { p50: 50, p90: 90, p99: 99 };

/**
 * The runs' values pooled and sorted once, with each value's place in the pooled order: a resample is then a count
 * per pooled value, and its statistics one walk up the pooled order (no sort, no selection per resample).
 */
export class PooledRuns {
  /** Every run's finite values together, ascending. */
  readonly sorted: Float64Array;
  /** For run r's i-th value (run order, `offsets[r] + i`), its index in `sorted`. */
  readonly placeOf: Uint32Array;
  /** Where each run's values start in run order; `offsets[runs]` is the total. */
  readonly offsets: Uint32Array;

  constructor(runs: readonly ArrayLike<number>[]) {
    const kept = runs.map((values) => Array.from(values).filter((value) => value === value));
    this.offsets = new Uint32Array(kept.length + 1);
    for (let run = 0; run < kept.length; run++) this.offsets[run + 1] = (this.offsets[run] as number) + (kept[run] as number[]).length;
    const total = this.offsets[kept.length] as number;
    const values = new Float64Array(total);
    kept.forEach((run, index) => values.set(run, this.offsets[index] as number));
    const order = new Uint32Array(total);
    for (let index = 0; index < total; index++) order[index] = index;
    order.sort((a, b) => (values[a] as number) - (values[b] as number) || a - b);
    this.sorted = new Float64Array(total);
    this.placeOf = new Uint32Array(total);
    for (let place = 0; place < total; place++) {
      const index = order[place] as number;
      this.sorted[place] = values[index] as number;
      this.placeOf[index] = place;
    }
  }

  get runCount(): number {
    return this.offsets.length - 1;
  }

  get valueCount(): number {
    return this.sorted.length;
  }

  /** Values of run `run`. */
  sizeOf(run: number): number {
    return (this.offsets[run + 1] as number) - (this.offsets[run] as number);
  }

  /** The statistic of all runs' values pooled: the point estimate an interval is given for. */
  pooled(statistic: BootstrapStatistic): number {
    if (this.valueCount === 0) return Number.NaN;
    if (statistic === 'mean') return this.sorted.reduce((sum, value) => sum + value, 0) / this.valueCount;
    return percentileOfSorted(this.sorted, PERCENTILE_OF[statistic]);
  }
}

/**
 * Two-level bootstrap draws of each statistic (docs/statistics.md): each resample draws as many runs as there are,
 * with replacement, then within each drawn run as many of its values as it has, with replacement, and takes the
 * statistic of everything drawn, pooled. Run-to-run spread (a different schedule, a different host state) and
 * request-to-request spread both widen the interval; with one run it is the ordinary bootstrap over requests.
 * Cost: `resamples` × (all values) draws, so callers bound `resamples` by the values (resamplesFor).
 */
export function hierarchicalBootstrapDraws(
  pooled: PooledRuns,
  statistics: readonly BootstrapStatistic[],
  resamples: number,
  random: SeededRandom,
): Map<BootstrapStatistic, Float64Array> {
  const draws = new Map(statistics.map((statistic) => [statistic, new Float64Array(resamples)] as const));
  const counts = new Uint32Array(pooled.valueCount);
  const runCount = pooled.runCount;
  const meanDraws = draws.get('mean');
  const percentiles = statistics.filter((statistic): statistic is Exclude<BootstrapStatistic, 'mean'> => statistic !== 'mean');
  for (let resample = 0; resample < resamples; resample++) {
    counts.fill(0);
    let drawn = 0;
    let sum = 0;
    for (let pick = 0; pick < runCount; pick++) {
      const run = Math.floor(random.next() * runCount);
      const start = pooled.offsets[run] as number;
      const size = pooled.sizeOf(run);
      for (let draw = 0; draw < size; draw++) {
        const place = pooled.placeOf[start + Math.floor(random.next() * size)] as number;
        counts[place] = (counts[place] as number) + 1;
        sum += pooled.sorted[place] as number;
      }
      drawn += size;
    }
    if (meanDraws !== undefined) meanDraws[resample] = drawn > 0 ? sum / drawn : Number.NaN;
    if (percentiles.length > 0) walkPercentiles(pooled.sorted, counts, drawn, percentiles, draws, resample);
  }
  return draws;
}

/** Each percentile of the resample the counts describe (`drawn` values in all), by one walk up the pooled order. */
function walkPercentiles(
  sorted: Float64Array,
  counts: Uint32Array,
  drawn: number,
  percentiles: readonly Exclude<BootstrapStatistic, 'mean'>[],
  draws: Map<BootstrapStatistic, Float64Array>,
  resample: number,
): void {
  if (drawn === 0) {
    for (const statistic of percentiles) (draws.get(statistic) as Float64Array)[resample] = Number.NaN;
    return;
  }
  // Ranks wanted (0-based, in the resample's own order), ascending: floor(rank) and the one above for each.
  const wanted = percentiles
    .map((statistic) => {
      const rank = (PERCENTILE_OF[statistic] / 100) * (drawn - 1);
      return { statistic, lowerRank: Math.floor(rank), fraction: rank - Math.floor(rank), lower: Number.NaN, upper: Number.NaN };
    })
    .sort((a, b) => a.lowerRank - b.lowerRank);
  let seen = 0; // values of the resample at places below `place`
  let next = 0;
  for (let place = 0; place < sorted.length && next < wanted.length; place++) {
    const count = counts[place] as number;
    if (count === 0) continue;
    seen += count;
    // The resample's values with ranks seen − count .. seen − 1 all equal sorted[place].
    while (next < wanted.length) {
      const entry = wanted[next] as (typeof wanted)[number];
      if (Number.isNaN(entry.lower)) {
        if (entry.lowerRank >= seen) break;
        entry.lower = sorted[place] as number;
      }
      if (entry.lowerRank + 1 >= drawn) entry.upper = entry.lower;
      else if (entry.lowerRank + 1 < seen) entry.upper = sorted[place] as number;
      else break; // the value above lies further up
      next++;
    }
  }
  for (const entry of wanted) (draws.get(entry.statistic) as Float64Array)[resample] = entry.lower + (entry.upper - entry.lower) * entry.fraction;
}

/** Value draws one bootstrap of a metric may make (resamples × values): a few seconds of CPU at most. */
export const BOOTSTRAP_DRAW_BUDGET = 20_000_000;

/** The resamples a two-level bootstrap of `values` values makes: `wanted`, fewer where that would pass the budget, never under 200. */
export function resamplesFor(values: number, wanted: number): number {
  if (values === 0) return wanted;
  return Math.max(200, Math.min(wanted, Math.floor(BOOTSTRAP_DRAW_BUDGET / values)));
}
