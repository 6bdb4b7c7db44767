import type { ChartDefinition, LegendEntry, LineSeries, Mark } from './chart-model.js';
import { PLOT_HEIGHT_PX, PLOT_WIDTH_PX, TIME_AXIS_TITLE } from './plot-size.js';
import { eventMarks, type EventMark } from './run-events.js';
import { lineLegend } from './series-palette.js';

export interface LineOverTime {
  name: string;
  title: string;
  subtitle?: string;
  description: string;
  series: readonly LineSeries[];
  yTitle: string;
  legendTitle: string;
  events: readonly EventMark[];
  extra?: readonly Mark[];
  extraLegendEntries?: readonly LegendEntry[];
}

/** Step lines over the run's time axis, one per series with a colour legend, and the run's events marked. */
export function lineOverTime(line: LineOverTime): ChartDefinition {
  return {
    name: line.name,
    title: line.title,
    description: line.description,
    chart: {
      title: line.title,
      ...(line.subtitle === undefined ? {} : { subtitle: line.subtitle }),
      plotWidthPx: PLOT_WIDTH_PX,
      plotHeightPx: PLOT_HEIGHT_PX,
      x: { kind: 'linear', title: TIME_AXIS_TITLE },
      y: { kind: 'linear', title: line.yTitle },
      marks: [{ kind: 'line', interpolation: 'step-after', strokeWidthPx: 1.5, series: line.series }, ...(line.extra ?? []), ...eventMarks(line.events)],
      legends: [lineLegend(line.legendTitle, line.series, line.extraLegendEntries)],
    },
  };
}
