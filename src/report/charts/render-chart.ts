import { Resvg } from '@resvg/resvg-js';
import { View, parse } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/**
 * Renders a Vega-Lite spec to a standalone SVG string in Node: compiled to Vega, run headless (no renderer, no DOM),
 * serialized by Vega itself. The SVG needs no script and no network, so it can be inlined in an offline report.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Rasterizes an SVG to PNG (twice the SVG's size, for sharp text), with the system's fonts. */
export function renderPng(svg: string): Uint8Array {
  return new Resvg(svg, { fitTo: { mode: 'zoom', value: 2 }, font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } })
    .render()
    .asPng();
}
