import { createRequire } from 'node:module';
import type * as ResvgModule from '@resvg/resvg-js';
import type * as VegaModule from 'vega';
import type * as VegaLiteModule from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';

// Vega, Vega-Lite and resvg are loaded on first use: every command that can write a run directory imports the
// reporters, and most never render a chart in that process before the run ends (or at all). They are CommonJS
// packages, loaded with `require`: `import()` of a CommonJS file first scans its whole source for named exports
// (cjs-module-lexer), which for Vega's bundles cost about 0.3 s of CPU in every run that writes charts.
const require = createRequire(import.meta.url);
let vegaModules: [typeof VegaModule, typeof VegaLiteModule] | undefined;
let resvgModule: typeof ResvgModule | undefined;

/**
 * Renders a Vega-Lite spec to a standalone SVG string in Node: compiled to Vega, run headless (no renderer, no DOM),
 * serialized by Vega itself. The SVG needs no script and no network, so it can be inlined in an offline report.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  vegaModules ??= [require('vega') as typeof VegaModule, require('vega-lite') as typeof VegaLiteModule];
  const [vega, vegaLite] = vegaModules;
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Rasterizes an SVG to PNG (twice the SVG's size, for sharp text), with the system's fonts. */
export async function renderPng(svg: string): Promise<Uint8Array> {
  resvgModule ??= require('@resvg/resvg-js') as typeof ResvgModule;
  const { Resvg } = resvgModule;
  return new Resvg(svg, { fitTo: { mode: 'zoom', value: 2 }, font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } })
    .render()
    .asPng();
}
