import { join } from 'node:path';
import { CONCURRENCY_STAGES, concurrencyTimeSeries, type ConcurrencyTimeSeries } from '../../analysis/timeseries.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { csvLine, formatSeconds } from '../csv/csv-format.js';

export const TIMESERIES_CSV = 'timeseries.csv';

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(4).replace(/0+$/, '').replace(/\.$/, '');
}

/** Rows of timeseries.csv: `time` (bin start, seconds after t0), per-stage mean and peak, then event counts. */
export function* timeSeriesCsvLines(series: ConcurrencyTimeSeries, t0: number): Generator<string> {
  const stages = CONCURRENCY_STAGES.filter((stage) => series.stages[stage] !== undefined);
  yield csvLine([
    'time',
    ...stages.flatMap((stage) => [`${stage}_mean`, `${stage}_peak`]),
    'arrivals',
    'completions',
    'failures',
    'output_tokens',
    'output_tokens_per_second',
  ]);
  for (let bin = 0; bin < series.binCount; bin++) {
    const fields = [formatSeconds(series.windowStart + bin * series.resolutionSeconds - t0)];
    for (const stage of stages) {
      const values = series.stages[stage] as { mean: Float64Array; peak: Float64Array };
      fields.push(formatNumber(values.mean[bin] as number), formatNumber(values.peak[bin] as number));
    }
    const outputTokens = series.outputTokens[bin] as number;
    fields.push(
      formatNumber(series.arrivals[bin] as number),
      formatNumber(series.completions[bin] as number),
      formatNumber(series.failures[bin] as number),
      formatNumber(outputTokens),
      formatNumber(outputTokens / series.resolutionSeconds),
    );
    yield csvLine(fields);
  }
}

/** `timeseries.csv`: concurrency per stage and event counts over time (docs/metrics.md). Nothing when no request ran. */
export const timeSeriesReporter: Reporter = {
  name: 'timeseries',
  async write(context: ReportContext): Promise<string[]> {
    const series = concurrencyTimeSeries(context.run.records);
    if (!series) return [];
    const path = join(context.outputDirectory, TIMESERIES_CSV);
    await writeFileAtomic(path, timeSeriesCsvLines(series, context.run.info.startTime));
    return [path];
  },
};
