import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ReportContext } from '../../types/reporter.js';
import { SERVER_METRICS_JSONL, readServerMetrics } from '../../scrape/server-metrics-file.js';
import type { ChartDefinition } from './chart-model.js';
import { chartDefinitions } from './chart-specs.js';
import { renderSvg } from './render-chart.js';

export interface RenderedChart extends ChartDefinition {
  svg: string;
}

// The HTML and chart reporters both need the SVGs: render once per context.
const cache = new WeakMap<ReportContext, Promise<RenderedChart[]>>();

/** Renders every chart of the run to SVG (once per context). Reads server-metrics.jsonl from the run directory if present. */
export function renderedCharts(context: ReportContext): Promise<RenderedChart[]> {
  let rendered = cache.get(context);
  if (!rendered) {
    rendered = (async () => {
      const metricsPath = join(context.outputDirectory, SERVER_METRICS_JSONL);
      const samples = existsSync(metricsPath) ? await readServerMetrics(metricsPath) : [];
      return chartDefinitions(context.run, context.summary, samples).map((definition) => ({ ...definition, svg: renderSvg(definition.chart) }));
    })();
    cache.set(context, rendered);
  }
  return rendered;
}
