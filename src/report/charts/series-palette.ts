import type { Legend, LegendEntry, LineSeries } from './chart-model.js';

/**
 * Colours for series that are not lifecycle stages (runs, nodes, servers, percentiles, outcomes), in the order they
 * are handed out: strongly distinct hues first, all dark enough to read as a thin line on white.
 */
const SERIES_COLOURS = ['#2f6fb0', '#e07b1f', '#c8383c', '#3a9e8f', '#5aa343', '#c9a227', '#8e5ea8', '#d9779a', '#8a6748', '#7d7d7d'] as const;

/** The colour of the index-th series; past the palette's end the colours repeat. */
export function seriesColour(index: number): string {
  return SERIES_COLOURS[index % SERIES_COLOURS.length] as string;
}

/** A legend naming each line series beside a stroke of its colour (then any `extra` entries). */
export function lineLegend(title: string, series: readonly LineSeries[], extra: readonly LegendEntry[] = []): Legend {
  return { title, entries: [...series.map((line): LegendEntry => ({ label: line.name, colour: line.colour, symbol: 'line' })), ...extra] };
}
