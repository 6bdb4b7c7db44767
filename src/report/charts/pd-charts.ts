import type { PdTransferBin, Summary } from '../../types/summary.js';
import type { ChartDefinition, LineSeries } from './chart-model.js';
import { lineOverTime } from './line-over-time.js';
import type { EventMark } from './run-events.js';
import { seriesColour } from './series-palette.js';

/** Bin starts and the last bin's end repeating its value, so that a step-after line draws the last bin's width too. */
function stepSeries(bins: readonly PdTransferBin[], value: (bin: PdTransferBin) => number | undefined): { xs: Float64Array; ys: Float64Array } {
  const xs = Float64Array.from({ length: bins.length + 1 }, (_, index) => (index < bins.length ? (bins[index] as PdTransferBin).startSinceT0Seconds : (bins.at(-1) as PdTransferBin).endSinceT0Seconds));
  const ys = Float64Array.from({ length: bins.length + 1 }, (_, index) => value(bins[Math.min(index, bins.length - 1)] as PdTransferBin) ?? Number.NaN);
  return { xs, ys };
}

/**
 * A PD run's KV transfers over time, from the records (summary.pd.kvTransferOverTime): their latency (p50, p99) and
 * the prompt tokens whose KV cache moved per second. None while the phase columns are empty.
 */
export function pdTransferCharts(summary: Summary, events: readonly EventMark[]): ChartDefinition[] {
  const bins = summary.pd?.kvTransferOverTime;
  if (bins === undefined || bins.length === 0) return [];
  const width = (bins[0] as PdTransferBin).endSinceT0Seconds - (bins[0] as PdTransferBin).startSinceT0Seconds;
  const latency: LineSeries[] = (['p50', 'p99'] as const).map((key, index) => ({
    name: `KV transfer ${key}`,
    colour: seriesColour(index),
    ...stepSeries(bins, (bin) => (bin.kvTransferTimeSeconds === null ? undefined : bin.kvTransferTimeSeconds[key] * 1000)),
  }));
  return [
    lineOverTime({
      name: 'pd-kv-transfer-latency',
      title: 'KV transfer time over time',
      description: `kv_transfer_time (p50 and p99, ms) of the requests arriving in each ${width} s bin; a bin without transfers is left blank.`,
      series: latency,
      yTitle: 'KV transfer time (ms)',
      legendTitle: 'statistic',
      events,
    }),
    lineOverTime({
      name: 'pd-kv-transfer-volume',
      title: 'KV moved over time',
      description: `Prompt tokens whose KV cache moved from prefill to decode servers, per second, by the requests arriving in each ${width} s bin (times the model's KV bytes per token for bytes).`,
      series: [{ name: 'tokens moved/s', colour: seriesColour(0), ...stepSeries(bins, (bin) => bin.transferredTokensPerSecond) }],
      yTitle: 'tokens per second',
      legendTitle: 'series',
      events,
    }),
  ];
}
