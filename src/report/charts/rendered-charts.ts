import type { ReportContext } from '../../types/reporter.js';
import { readServerMetrics } from '../../scrape/server-metrics-file.js';
import type { ChartDefinition } from './chart-model.js';
import { SCRAPED_GAUGE_CHARTS, chartDefinitions } from './chart-specs.js';
import { PD_SCRAPED_SERIES } from './pd-scraped-charts.js';
import { renderSvg } from './render-chart.js';

export interface RenderedChart extends ChartDefinition {
  svg: string;
}

// The HTML and chart reporters both need the SVGs: render once per context.
const cache = new WeakMap<ReportContext, Promise<RenderedChart[]>>();

/**
 * Renders every chart of the run to SVG (once per context). Reads the charted gauges of the run's scraped server
 * metrics (server-metrics.csv, or what an older or killed run left) from the run directory, only those series.
 */
export function renderedCharts(context: ReportContext): Promise<RenderedChart[]> {
  let rendered = cache.get(context);
  if (!rendered) {
    rendered = (async () => {
      const charted = new Set<string>([...SCRAPED_GAUGE_CHARTS.map(([metric]) => metric), ...PD_SCRAPED_SERIES]);
      const samples = await readServerMetrics(context.outputDirectory, context.run.info.startTime, (name) => charted.has(name));
      return chartDefinitions(context.run, context.summary, samples).map((definition) => ({ ...definition, svg: renderSvg(definition.chart) }));
    })();
    cache.set(context, rendered);
  }
  return rendered;
}
