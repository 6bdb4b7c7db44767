import { describe, expect, test } from 'vitest';
import { monotoneCubicInSegment, segmentOf } from '../../../src/engine/profile/monotone-cubic.js';

/** The curve through (xs[i], ys[i]) at x, x between the first and the last point. */
const curveAt = (xs: readonly number[], ys: readonly number[], x: number): number => monotoneCubicInSegment(xs, (index) => ys[index] as number, segmentOf(xs, x), x);

describe('monotone cubic between points', () => {
  test('reproduces a straight line exactly, on an uneven grid too', () => {
    const xs = [0, 64, 128, 136, 192, 512];
    const ys = xs.map((x) => 30 + 0.04 * x);
    for (let x = 0; x <= 512; x += 7) expect(curveAt(xs, ys, x)).toBeCloseTo(30 + 0.04 * x, 9);
  });

  test('follows a concave law closer than the chord, from above it', () => {
    const law = (x: number): number => 4 + 0.6 * Math.sqrt(x);
    const xs = [16, 64, 128, 256, 512];
    const ys = xs.map(law);
    for (const x of [40, 96, 192, 384]) {
      const index = segmentOf(xs, x);
      const [x0, x1] = [xs[index] as number, xs[index + 1] as number];
      const chord = law(x0) + ((law(x1) - law(x0)) * (x - x0)) / (x1 - x0);
      const curve = curveAt(xs, ys, x);
      expect(curve, `${x}`).toBeGreaterThan(chord);
      expect(Math.abs(curve - law(x)), `${x}`).toBeLessThan(Math.abs(chord - law(x)) / 2);
    }
  });

  test('never overshoots a flat or a padded shape\'s jump, and keeps the straight segments beside the jump straight', () => {
    // withPaddingSteps' shape: linear to 512, a jump at 513, flat to 544, linear on.
    const xs = [256, 384, 512, 513, 544, 768];
    const ys = [37.68, 41.52, 45.36, 60.39, 60.39, 66.72];
    for (let x = 513; x <= 544; x += 1) expect(curveAt(xs, ys, x)).toBeCloseTo(60.39, 9);
    // Between 384 and 512 the engine is a straight line; a slope at 512 pulled up by the jump had bowed the curve 3% under it.
    for (let x = 384; x <= 512; x += 8) expect(curveAt(xs, ys, x)).toBeCloseTo(41.52 + 0.03 * (x - 384), 6);
    const knee = [64, 256, 1024];
    for (let x = 64; x <= 256; x += 8) expect(curveAt(knee, [2.5, 2.5, 8], x)).toBeCloseTo(2.5, 9);
  });
});
