/**
 * Monotone cubic Hermite interpolation (Fritsch and Carlson's PCHIP slopes), the way the measured table is read
 * between its points. A straight line between two points of a concave step law lies under the law (a chord): a table
 * read that way priced a loaded foreign engine's steps 1-2.5% cheap, which queueing at 0.95x of capacity turned into
 * a TTFT p50 30% low (docs/simulated-engine.md). A cubic whose slope at each point is taken from the segments either
 * side follows the curvature those points show, reproduces a straight line exactly (equal segments give equal slopes),
 * and never overshoots: where the segments either side of a point rise and fall, or one is flat, the slope there is 0
 * (a padded shape's jump, withPaddingSteps in measured-table-fit.ts, stays a jump between flat segments).
 */

/** The slope at an interior point: the weighted harmonic mean of the segments' slopes either side, 0 where they differ in sign. */
function interiorSlope(widthBefore: number, secantBefore: number, widthAfter: number, secantAfter: number): number {
  if (secantBefore * secantAfter <= 0) return 0;
  const weightBefore = 2 * widthAfter + widthBefore;
  const weightAfter = widthAfter + 2 * widthBefore;
  return (weightBefore + weightAfter) / (weightBefore / secantBefore + weightAfter / secantAfter);
}

/**
 * The slope at an end point from its segment (`width`, `secant`) and the next one in: the three-point difference,
 * limited so that the end segment stays monotone (0 against the segment's sign, at most three times its slope where
 * the next segment turns back).
 */
function endSlope(width: number, secant: number, nextWidth: number, nextSecant: number): number {
  const slope = ((2 * width + nextWidth) * secant - width * nextSecant) / (width + nextWidth);
  if (slope * secant <= 0) return 0;
  if (secant * nextSecant < 0 && Math.abs(slope) > 3 * Math.abs(secant)) return 3 * secant;
  return slope;
}

/**
 * How many times steeper than the segment beside it a segment must rise to be read as a break (a padded shape's jump,
 * which withPaddingSteps in measured-table-fit.ts marks by the same factor): the point between takes its slope from
 * the other side alone, as at an axis end. A harmonic mean with a jump would tilt the smooth side towards it (a
 * padded engine's 484-token step came out 3.4% cheap, its curve bowing under the straight line the engine follows).
 */
const BREAK_STEEPNESS = 4;

/**
 * The curve's slope at `point` through the points (xs[i], ys[i]); only ys[point - 2] to ys[point + 2] are read.
 * Inside, the weighted harmonic mean of the segments either side (0 where they differ in sign or one is flat), or the
 * one-sided slope of the smooth side next to a break; at an axis end, the one-sided slope; with two points, the line.
 */
export function slopeAtPoint(xs: ArrayLike<number>, ys: ArrayLike<number>, point: number): number {
  const lastSegment = xs.length - 2;
  const width = (segment: number): number => (xs[segment + 1] as number) - (xs[segment] as number);
  const secant = (segment: number): number => ((ys[segment + 1] as number) - (ys[segment] as number)) / width(segment);
  // The slope at a point from one of its segments and the next one away from the point, when there is one.
  const oneSided = (segment: number, away: number): number => {
    const next = segment + away;
    return next < 0 || next > lastSegment ? secant(segment) : endSlope(width(segment), secant(segment), width(next), secant(next));
  };
  if (point === 0) return oneSided(0, 1);
  if (point === lastSegment + 1) return oneSided(lastSegment, -1);
  const before = secant(point - 1);
  const after = secant(point);
  if (before * after <= 0) return 0;
  if (Math.abs(after) > BREAK_STEEPNESS * Math.abs(before)) return oneSided(point - 1, -1);
  if (Math.abs(before) > BREAK_STEEPNESS * Math.abs(after)) return oneSided(point, 1);
  return interiorSlope(width(point - 1), before, width(point), after);
}

/** The cubic Hermite between (x0, y0) and (x1, y1) with those slopes, at `x`. */
export function hermiteAt(x0: number, x1: number, y0: number, y1: number, slope0: number, slope1: number, x: number): number {
  const h = x1 - x0;
  const t = (x - x0) / h;
  const t2 = t * t;
  const t3 = t2 * t;
  return (2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + t) * h * slope0 + (-2 * t3 + 3 * t2) * y1 + (t3 - t2) * h * slope1;
}

/**
 * The value at `x` inside segment `index` (between xs[index] and xs[index + 1]) of the monotone cubic through the
 * points (xs[i], valueAt(i)); only the points index - 2 to index + 3 are read, each once. With two points it is the
 * straight line.
 */
export function monotoneCubicInSegment(xs: readonly number[], valueAt: (index: number) => number, index: number, x: number): number {
  if (x === xs[index]) return valueAt(index);
  if (x === xs[index + 1]) return valueAt(index + 1);
  const ys = new Array<number>(xs.length);
  for (let at = Math.max(0, index - 2); at <= Math.min(xs.length - 1, index + 3); at++) ys[at] = valueAt(at);
  return hermiteAt(xs[index] as number, xs[index + 1] as number, ys[index] as number, ys[index + 1] as number, slopeAtPoint(xs, ys, index), slopeAtPoint(xs, ys, index + 1), x);
}

/**
 * The segment `x` falls in on sorted `xs` (at least two points): the lower point's index, the last segment for `x`
 * past the last point, the first for `x` before the first.
 */
export function segmentOf(xs: readonly number[], x: number): number {
  let index = 0;
  while (index < xs.length - 2 && x > (xs[index + 1] as number)) index++;
  return index;
}
