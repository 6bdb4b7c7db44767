import { niceStep, stepMultiple, stepValue, type NiceStep } from './nice-step.js';
import { tickLabel } from './tick-label.js';

export interface Tick {
  value: number;
  label: string;
}

/** Maps data values to pixels along one axis; the domain is widened to whole tick steps. */
export interface LinearScale {
  domain: readonly [number, number];
  ticks: readonly Tick[];
  /** Pixel position of a value; rangeStart at the domain's start (for a y axis, the bottom of the plot). */
  position(value: number): number;
}

export interface LinearScaleOptions {
  /** Lowest and highest finite data values, or undefined when there are none. */
  extent: readonly [number, number] | undefined;
  /** A domain that is kept as given (a CDF's 0 to 1) instead of being derived from the data. */
  fixedDomain?: readonly [number, number];
  includeZero: boolean;
  rangeStartPx: number;
  rangeEndPx: number;
  /** About how many intervals between ticks the axis has room for. */
  tickIntervals: number;
}

/** The data extent made into a non-empty span: no data draws 0 to 1, a single value gets room on both sides. */
function spanOf(options: LinearScaleOptions): [number, number] {
  if (options.fixedDomain) return [options.fixedDomain[0], options.fixedDomain[1]];
  let [low, high] = options.extent ?? [0, 1];
  if (options.includeZero) {
    low = Math.min(low, 0);
    high = Math.max(high, 0);
  }
  if (low === high) {
    const pad = low === 0 ? 1 : Math.abs(low) * 0.1;
    return low === 0 ? [0, 1] : [low - pad, high + pad];
  }
  return [low, high];
}

export function linearScale(options: LinearScaleOptions): LinearScale {
  const [low, high] = spanOf(options);
  const step: NiceStep = niceStep((high - low) / Math.max(1, options.tickIntervals));
  const size = stepValue(step);
  // A data domain grows to whole steps (the tolerance keeps 0.3 / 0.1 = 2.9999999999999996 at 3 steps); a fixed one
  // stays as given, with the ticks that fall inside it.
  const fromK = options.fixedDomain ? Math.ceil(low / size - 1e-9) : Math.floor(low / size + 1e-9);
  const toK = options.fixedDomain ? Math.floor(high / size + 1e-9) : Math.ceil(high / size - 1e-9);
  const domain: [number, number] = options.fixedDomain ? [low, high] : [stepMultiple(step, fromK), stepMultiple(step, toK)];
  const largest = Math.max(Math.abs(domain[0]), Math.abs(domain[1]));
  const ticks: Tick[] = [];
  for (let k = fromK; k <= toK; k++) {
    // `|| 0` turns the -0 of ceil(-1e-9) into 0.
    const value = stepMultiple(step, k) || 0;
    ticks.push({ value, label: tickLabel(value, step, largest) });
  }
  const [start, end] = [options.rangeStartPx, options.rangeEndPx];
  const pixelsPerUnit = (end - start) / (domain[1] - domain[0]);
  return { domain, ticks, position: (value) => start + (value - domain[0]) * pixelsPerUnit };
}
