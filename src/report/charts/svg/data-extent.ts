import type { Mark } from '../chart-model.js';

/** Running lowest and highest finite value. */
class Extent {
  low = Infinity;
  high = -Infinity;
  add(value: number): void {
    if (!Number.isFinite(value)) return;
    if (value < this.low) this.low = value;
    if (value > this.high) this.high = value;
  }
  result(): [number, number] | undefined {
    return this.low <= this.high ? [this.low, this.high] : undefined;
  }
}

/**
 * The finite extent of every mark's values along x and along y (rules count on their own axis, so a target or an
 * event outside the data still shows); undefined where there is no finite value.
 */
export function dataExtents(marks: readonly Mark[]): { x: [number, number] | undefined; y: [number, number] | undefined } {
  const x = new Extent();
  const y = new Extent();
  for (const mark of marks) {
    if (mark.kind === 'line') {
      // A point counts only when both its coordinates are finite: the line skips it otherwise.
      for (const series of mark.series) {
        const count = Math.min(series.xs.length, series.ys.length);
        for (let index = 0; index < count; index++) {
          const [xValue, yValue] = [series.xs[index] as number, series.ys[index] as number];
          if (!Number.isFinite(xValue) || !Number.isFinite(yValue)) continue;
          x.add(xValue);
          y.add(yValue);
        }
      }
    } else if (mark.kind === 'rule') {
      for (const rule of mark.rules) (mark.axis === 'x' ? x : y).add(rule.value);
    } else {
      for (const bar of mark.bars) {
        x.add(bar.startX);
        x.add(bar.endX);
      }
    }
  }
  return { x: x.result(), y: y.result() };
}
