import type { BandScale } from './band-scale.js';
import type { LinearScale } from './linear-scale.js';
import type { PlotBox } from './plot-box.js';

/** What a mark needs to place itself: the plot, the x scale, and the y scale of whichever kind the chart has. */
export interface MarkContext {
  plot: PlotBox;
  x: LinearScale;
  y: LinearScale | undefined;
  band: BandScale | undefined;
}

/** A drawn mark, and how far its labels reach past the plot's right edge (the chart widens to keep them whole). */
export interface DrawnMark {
  svg: string;
  rightOverflowPx: number;
}

/** Keeps a pixel inside [low, high]: a value outside a fixed domain draws at its edge rather than over the axes. */
export function clamp(value: number, low: number, high: number): number {
  return value < low ? low : value > high ? high : value;
}
