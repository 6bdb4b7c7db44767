import type { LineSeries } from './chart-model.js';
import { seriesColour } from './series-palette.js';

/** Series built point by point, in the order their names first appear. */
export class SeriesBuilder {
  private readonly byName = new Map<string, { xs: number[]; ys: number[] }>();
  add(name: string, x: number, y: number): void {
    let series = this.byName.get(name);
    if (!series) {
      series = { xs: [], ys: [] };
      this.byName.set(name, series);
    }
    series.xs.push(x);
    series.ys.push(y);
  }
  /** The series, coloured from the series palette in order of appearance. */
  build(): LineSeries[] {
    return [...this.byName].map(([name, points], index) => ({ name, colour: seriesColour(index), ...points }));
  }
}
