/**
 * What a chart shows, independent of how it is drawn: servelab's charts are a small fixed set of kinds (lines over a
 * linear axis, rules, horizontal bars in rows), so a plain typed model is enough and renders to SVG directly.
 */

/** A continuous axis. The domain is the data's (rules included) unless given; it starts at zero unless told not to. */
export interface LinearAxis {
  kind: 'linear';
  title: string;
  domain?: readonly [number, number];
  includeZero?: boolean;
}

/** One row per category, top to bottom in the order given (horizontal bars, the request timeline). */
export interface BandAxis {
  kind: 'band';
  title: string;
  categories: readonly string[];
  /** False hides the category names (the timeline's request numbers say nothing). */
  showLabels: boolean;
}

export interface LineSeries {
  name: string;
  colour: string;
  xs: ArrayLike<number>;
  ys: ArrayLike<number>;
}

/** Lines through (x, y) points; a NaN or infinite coordinate is skipped. */
export interface LineMark {
  kind: 'line';
  /** `step-after` holds each value until the next point's x (a CDF, binned rates). */
  interpolation: 'linear' | 'step-after';
  strokeWidthPx: number;
  series: readonly LineSeries[];
  /** Draws a dot at each point (a trend over a handful of runs). */
  pointRadiusPx?: number;
}

export interface Rule {
  value: number;
  colour: string;
  label?: string;
}

/**
 * Straight lines across the plot at given values: `x` rules are vertical (percentiles, events), `y` rules horizontal
 * (a target). Labels sit at the top (`top`), or rotated along the rule from the bottom (`along-bottom`).
 */
export interface RuleMark {
  kind: 'rule';
  axis: 'x' | 'y';
  rules: readonly Rule[];
  dashPx: readonly number[];
  strokeWidthPx: number;
  labelPlacement: 'top' | 'along-bottom' | 'end';
}

/** A horizontal segment in a band row, from startX to endX; its label, if any, is written after its end. */
export interface Bar {
  category: string;
  startX: number;
  endX: number;
  colour: string;
  label?: string;
}

/** Horizontal bars on a band y axis: several bars of one row side by side make a stack or a timeline. */
export interface BarMark {
  kind: 'bar';
  bars: readonly Bar[];
  /** Fixed bar thickness; default: most of the row's height. */
  thicknessPx?: number;
}

export type Mark = LineMark | RuleMark | BarMark;

export interface LegendEntry {
  label: string;
  colour: string;
  symbol: 'line' | 'dashed-line' | 'square';
}

export interface Legend {
  title: string;
  entries: readonly LegendEntry[];
}

export interface ChartModel {
  title: string;
  subtitle?: string;
  plotWidthPx: number;
  plotHeightPx: number;
  x: LinearAxis;
  y: LinearAxis | BandAxis;
  /** Drawn in order: later marks over earlier ones. */
  marks: readonly Mark[];
  /** Stacked to the right of the plot, never over it. */
  legends: readonly Legend[];
}

/** One chart of the report: file name (without extension), title, what it shows, and what to draw. */
export interface ChartDefinition {
  name: string;
  title: string;
  description: string;
  chart: ChartModel;
}
