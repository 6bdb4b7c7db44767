import { createRequire } from 'node:module';
import type * as ResvgModule from '@resvg/resvg-js';
import type { ChartModel } from './chart-model.js';
import { renderChartSvg } from './svg/render-chart-svg.js';

// resvg is loaded on first use: every command that can write a run directory imports the reporters, and most never
// rasterize a chart in that process before the run ends (or at all). It is a CommonJS package, loaded with `require`
// (an `import()` of CommonJS first scans the file for named exports).
const require = createRequire(import.meta.url);
let resvgModule: typeof ResvgModule | undefined;

/**
 * The chart as a standalone SVG string: no script and no network, so it can be inlined in an offline report. Drawn
 * by servelab itself (svg/), synchronously: a 10,000-request run's charts take milliseconds.
 */
export function renderSvg(chart: ChartModel): string {
  return renderChartSvg(chart);
}

/** Rasterizes an SVG to PNG (twice the SVG's size, for sharp text), with the system's fonts. */
export async function renderPng(svg: string): Promise<Uint8Array> {
  resvgModule ??= require('@resvg/resvg-js') as typeof ResvgModule;
  const { Resvg } = resvgModule;
  return new Resvg(svg, { fitTo: { mode: 'zoom', value: 2 }, font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } })
    .render()
    .asPng();
}
