import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
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

/** Where Linux distributions and macOS keep DejaVu Sans, the charts' first font. */
export const DEJAVU_DIRECTORIES: readonly string[] = [
  '/usr/share/fonts/truetype/dejavu',
  '/usr/share/fonts/dejavu',
  '/usr/share/fonts/TTF',
  '/usr/share/fonts/dejavu-sans-fonts',
  '/usr/local/share/fonts',
  '/Library/Fonts',
];

type FontOptions = NonNullable<ConstructorParameters<typeof ResvgModule.Resvg>[1]>['font'];

/**
 * The fonts resvg loads for each PNG: DejaVu Sans and its bold (all the charts use) when found in one of `directories`,
 * else every system font. resvg opens, reads and parses a font file again for each run of text it lays out (some 25
 * labels a chart, about 0.4 ms each with DejaVu Sans): the system's whole set took about 30 ms more per run's charts
 * than the two files the charts need.
 */
export function chartFontOptions(directories: readonly string[] = DEJAVU_DIRECTORIES): FontOptions {
  for (const directory of directories) {
    const files = [join(directory, 'DejaVuSans.ttf'), join(directory, 'DejaVuSans-Bold.ttf')];
    if (files.every((file) => existsSync(file))) return { loadSystemFonts: false, fontFiles: files, defaultFontFamily: 'DejaVu Sans' };
  }
  return { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' };
}

let fontOptions: FontOptions | undefined;

/** Rasterizes an SVG to PNG (twice the SVG's size, for sharp text), drawn and encoded by resvg. */
export async function renderPng(svg: string): Promise<Uint8Array> {
  resvgModule ??= require('@resvg/resvg-js') as typeof ResvgModule;
  fontOptions ??= chartFontOptions();
  const { Resvg } = resvgModule;
  return new Resvg(svg, { fitTo: { mode: 'zoom', value: 2 }, font: fontOptions, background: 'white' }).render().asPng();
}
