import type { MeasuredStepTable, RooflineCoefficients } from '../../types/engine.js';
import { floorLiftMs } from '../profile/floor-lift.js';
import { interpolateStepMs, tableStepMs } from '../profile/measured-table.js';
import { monotoneCubicInSegment, segmentOf } from '../profile/monotone-cubic.js';
import type { StepObservation } from './fit-profile.js';

/**
 * Builds a measured step table from calibration observations, for engines whose step time the roofline formula cannot
 * describe. The sweep measures two families of steps: prefill steps alone (batch 1, several prompt lengths) and decode
 * steps alone (several batch sizes, each at one or more KV lengths). The table is filled from them:
 *
 * - decode plane (prefill 0): for each measured batch size, step time follows a monotone cubic in KV tokens through
 *   that batch's points (monotone-cubic.ts; one point: the KV slope of the nearest batch with two); batches in between
 *   are interpolated the same way over the batch. Below a batch's first point it is carried back along its first
 *   segment where that rises (at no more than the batch's mean slope): held there, a batch's decode part at the mixed sweep's shorter contexts came out dear,
 *   the excess measured against it cheap by as much, and every mixed cell beside that batch cheap with it (a loaded
 *   foreign engine's steps: 0.38% cheap on average held, 0.15% carried back; measured-table-fit.test.ts).
 *   Past a batch's last point it follows the batch's mean slope (first point to last), not its last segment's: an
 *   engine whose step time jumps with KV (transformers pads KV reads to 16,384-token buckets) can have its steepest
 *   segment last, and carried on, that slope prices steps at twice the KV several times too high. The KV axis ends
 *   at twice the largest KV measured, so that what the simulator extrapolates past the table follows the mean slope
 *   too.
 * - prefill row (no decode): the measured prefill steps; prefill 0 with no decode is the line through the first two
 *   prefill points taken back to zero tokens, the step's fixed cost.
 * - mixed steps (decode and prefill together, which engines with mixed batches run): decode step + prefill step - the
 *   fixed cost, so the fixed cost is paid once; plus, where the sweep measured mixed steps, what they cost beyond
 *   that sum, interpolated over the batch, prompt tokens and KV tokens (`mixingExcess`). The prefill part is a
 *   prefill step of the step's own tokens (the prompt's and one per decoding sequence: `mixedPrefillTokens: 'step'`,
 *   added where the table is read, tableStepMs), so that a step crossing a padded shape pays it where it crosses;
 *   where no mixed step was measured, the plain sum of a decode step and a prefill step of the prompt.
 *   A mixed step never costs less than its decode part or its prefill part alone.
 * - padding: the prefill row steps up right after a point where the engine pads (withPaddingSteps).
 *
 * Every value read between measured points follows a monotone cubic through them, as the table is read between its
 * cells (interpolateStepMs): straight lines between the points of a concave law are chords under it, and built from
 * chords and read along chords the table had priced a loaded foreign engine's steps 1.3% cheap on average.
 *
 * With the fitted roofline form of the same sweep (`form`), every value read between measured points (a prompt size,
 * KV length or batch size the grid holds for another family's sake) is interpolated less the form's floor lift and
 * the lift added back (floor-lift.ts), as the twin reads the table between its cells: a line across the floor's knee
 * runs above the step's `max(floor, work)`.
 */
export function buildMeasuredTable(observations: readonly StepObservation[], form?: RooflineCoefficients): MeasuredStepTable | null {
  const prefill = observations.filter((o) => o.kind === 'prefill').sort((a, b) => a.size - b.size);
  const decode = observations.filter((o) => o.kind === 'decode');
  if (prefill.length === 0 || decode.length === 0) return null;

  const measuredPoints = dedupe(prefill.map((o) => [o.size, o.stepMs] as const));
  const fixedMs = Math.max(0, fixedCost(measuredPoints));
  const prefillPoints = withPaddingSteps(measuredPoints);
  const measuredPrefill: (readonly [number, number])[] = [[0, fixedMs], ...prefillPoints.filter(([tokens]) => tokens > 0)];
  // Mixed steps' prompt sizes are grid points too (their prefill part read off the prefill steps as the table would
  // interpolate it), so that the table holds their excess at the prompt size it was measured at.
  const mixedPrompts = observations.filter((o) => o.kind === 'mixed' && (o.prefillTokens ?? 0) > 0).map((o) => o.prefillTokens as number);
  const prefillTokens = [...new Set([...measuredPrefill.map(([tokens]) => tokens), ...mixedPrompts])].sort((a, b) => a - b);
  const liftAt = (batch: number, prefill: number, kv: number): number => (form === undefined ? 0 : floorLiftMs(form, batch, prefill, kv));
  const prefillMs = prefillTokens.map((tokens) => lifted(measuredPrefill, tokens, (x) => liftAt(0, x, 0), curveThrough));

  const batches = [...new Set(decode.map((o) => o.size))].sort((a, b) => a - b);
  const lines = batches.map((batch) => dedupe(decode.filter((o) => o.size === batch).map((o) => [o.secondary, o.stepMs] as const)));
  const slopeOf = (points: readonly (readonly [number, number])[]): number | null => (points.length < 2 ? null : meanSlope(points));
  // Mixed steps' KV sizes are grid points too, so that the table bends where their excess does.
  const measuredKv = [0, ...new Set([...decode, ...observations.filter((o) => o.kind === 'mixed')].map((o) => o.secondary))].sort((a, b) => a - b).filter((v, i, all) => i === 0 || v > (all[i - 1] as number));
  const kvTokens = [...measuredKv, 2 * (measuredKv[measuredKv.length - 1] as number)].filter((v, i, all) => i === 0 || v > (all[i - 1] as number));
  const decodeAt = (batchIndex: number, kv: number): number => {
    const points = lines[batchIndex] as (readonly [number, number])[];
    if (points.length >= 2) return lifted(points, kv, (x) => liftAt(batches[batchIndex] as number, 0, x), piecewise);
    // One point: borrow the KV slope of the nearest batch size measured at two KV lengths or more.
    let slope = 0;
    for (let distance = 1; distance < lines.length; distance++) {
      const candidate = slopeOf(lines[batchIndex - distance] ?? []) ?? slopeOf(lines[batchIndex + distance] ?? []);
      if (candidate !== null) {
        slope = Math.max(0, candidate);
        break;
      }
    }
    const [x0, y0] = points[0] as readonly [number, number];
    return Math.max(0, y0 + slope * (kv - x0));
  };

  // Decode at a batch size between measured ones: a monotone cubic over them (held outside), as the table is read.
  const decodeAtBatch = (batch: number, kv: number): number => {
    const above = batches.findIndex((measured) => measured >= batch);
    if (above === -1) return decodeAt(batches.length - 1, kv);
    if (above === 0 || batches[above] === batch) return decodeAt(above, kv);
    const lessLift = (index: number): number => decodeAt(index, kv) - liftAt(batches[index] as number, 0, kv);
    return monotoneCubicInSegment(batches, lessLift, above - 1, batch) + liftAt(batch, 0, kv);
  };
  // Mixed steps' batch sizes are grid points too, so that the table holds their excess at the batch it was measured at.
  const mixedBatches = observations.filter((o) => o.kind === 'mixed' && (o.prefillTokens ?? 0) > 0).map((o) => o.size);
  const decodeSequences = [0, ...new Set([...batches, ...mixedBatches])].sort((a, b) => a - b);
  const partsTable: MeasuredStepTable = {
    decodeSequences,
    prefillTokens,
    kvTokens,
    stepMs: decodeSequences.map((batch) =>
      prefillTokens.map((_tokens, prefillIndex) =>
        kvTokens.map((kv) => {
          const prefillPart = prefillMs[prefillIndex] as number;
          if (batch === 0) return prefillPart;
          const decodePart = decodeAtBatch(batch, kv);
          return prefillIndex === 0 ? decodePart : decodePart + prefillPart - fixedMs;
        }),
      ),
    ),
  };
  // A mixed step's parts: its decode step, and a prefill step of the step's tokens (one per decoding sequence besides
  // the prompt's), read as the twin reads it (tableStepMs), so that the excess left is what mixing costs beyond padding.
  const sumOfParts = (batch: number, prefill: number, kv: number): number =>
    interpolateStepMs(partsTable, batch, 0, kv, form) + interpolateStepMs(partsTable, 0, prefill + batch, 0, form) - fixedMs;
  const excess = mixingExcess(observations.filter((o) => o.kind === 'mixed'), sumOfParts, form);
  // No mixed step measured: the plain sum of a decode step and a prefill step of the prompt (mixedPrefillTokens absent).
  // Read at the step's tokens it would count the decoding sequences' tokens twice (a decode step already computes
  // them), with no measured step to say whether the engine pads them.
  if (excess === null) return partsTable;
  const stepMs = partsTable.stepMs.map((plane, batchIndex) =>
    plane.map((row, prefillIndex) =>
      row.map((partsMs, kvIndex) => {
        const tokens = prefillTokens[prefillIndex] as number;
        if (batchIndex === 0 || tokens === 0) return partsMs;
        const kv = kvTokens[kvIndex] as number;
        // The cell's decode part alone is this plane's prefill-0 row; its prefill part alone, a prefill step of the
        // step's tokens. The twin adds the prompt part's move to the step's tokens (`shiftMs`) to the cell, so the
        // floor is held less that move.
        const batch = decodeSequences[batchIndex] as number;
        const shiftMs = interpolateStepMs(partsTable, 0, tokens + batch, 0, form) - (prefillMs[prefillIndex] as number);
        const floorMs = Math.max(plane[0]?.[kvIndex] as number, prefillMs[prefillIndex] as number + shiftMs) - shiftMs;
        return Math.max(floorMs, partsMs + excess(batch, tokens, kv));
      }),
    ),
  );
  return { decodeSequences, prefillTokens, kvTokens, stepMs, mixedPrefillTokens: 'step' };
}

/**
 * The prefill points with a step placed where the engine pads. A segment shorter than both its neighbours that rises
 * by more than 5% of its start, and four times as steeply as either neighbour, is read as a jump right after its first
 * point (a point at x + 1 with the segment's end value), as padding to the next captured or tuned shape makes it;
 * a line across the segment would be wrong. The sweep measures a point just above each power of two for this:
 * transformers' continuous batching (CUDA graphs on) took 44.2 ms at 512 tokens and 59.5 ms at 544, and a 513-token
 * step cost the latter (bench/real-engine/results/2026-11-26-four-rates). A smooth law has no such segment, nor has a
 * floor's knee (the segment past it is as steep as the ones after).
 */
export function withPaddingSteps(points: readonly (readonly [number, number])[]): (readonly [number, number])[] {
  const slope = (index: number): number | undefined => {
    const from = points[index];
    const to = points[index + 1];
    return from === undefined || to === undefined ? undefined : (to[1] - from[1]) / (to[0] - from[0]);
  };
  const result: (readonly [number, number])[] = [];
  for (const [index, point] of points.entries()) {
    result.push(point);
    const next = points[index + 1];
    const rise = slope(index);
    if (next === undefined || rise === undefined || next[0] - point[0] < 2) continue;
    // A jump is a short steep segment between two ordinary ones (the sweep's p to p + p/16). The first and last
    // segments are never judged: a row's end rising off a flat floor is a knee, not a jump.
    const before = points[index - 1];
    const after = points[index + 2];
    const slopeBefore = slope(index - 1);
    const slopeAfter = slope(index + 1);
    if (before === undefined || after === undefined || slopeBefore === undefined || slopeAfter === undefined) continue;
    const span = next[0] - point[0];
    const short = span < point[0] - before[0] && span < after[0] - next[0];
    if (short && next[1] - point[1] > 0.05 * point[1] && rise > 4 * Math.max(slopeBefore, slopeAfter, 0)) result.push([point[0] + 1, next[1]]);
  }
  return result;
}

/**
 * What measured mixed steps cost beyond decode step + prefill step - the fixed cost, as a function of the decoding
 * batch B, the prompt tokens P and the batch's KV tokens. The points are grouped by B (each batch size the sweep
 * measured is a level); within a level, by P (values within 25% of each other form one level), and within that the
 * excess follows a monotone cubic in KV through its points (monotone-cubic.ts), held flat past the first and last;
 * between P levels a monotone cubic over them, below the smallest it shrinks in proportion to P (no prompt tokens: a
 * plain decode step), above the largest it is held. Between B levels a monotone cubic over them, below the smallest it
 * shrinks in proportion to B (no batch: a prefill step alone), above the largest it is held.
 *
 * Why B is an axis of its own: an engine whose step cost multiplies tokens by a function of the sequences in the step
 * (bench/foreign-engine's `sqrt(tokens) x ln(1 + sequences)`) pays more for a prompt chunk beside a large batch than
 * beside a small one. Interpolated over P and KV alone, the sweep's points (small and large batches at short and long
 * prompts) put a small batch's excess at the KV tokens a large batch reads in serving: that table priced the foreign
 * engine's mixed steps of 12-16 sequences 17% cheap and those of 1-3 sequences 20% dear, on the steps its own runs
 * took (docs/simulated-engine.md). Measured on transformers' continuous batching the excess is a step in KV (its
 * attention pads KV reads to 16,384-token buckets) and barely depends on P, which no product form such as a * P * kv
 * follows: each level keeps that shape. Null when no mixed step was measured.
 */
export function mixingExcess(
  mixed: readonly StepObservation[],
  sumOfParts: (batch: number, prefillTokens: number, kvTokens: number) => number,
  form?: RooflineCoefficients,
): ((batch: number, prefillTokens: number, kvTokens: number) => number) | null {
  if (mixed.length === 0) return null;
  const points = mixed
    .map((o) => ({ batch: o.size, prefill: o.prefillTokens ?? 0, kv: o.secondary, excessMs: o.stepMs - sumOfParts(o.size, o.prefillTokens ?? 0, o.secondary) }))
    .filter((point) => point.prefill > 0 && point.batch > 0);
  if (points.length === 0) return null;
  const batches = [...new Set(points.map((point) => point.batch))].sort((a, b) => a - b);
  const levels = batches.map((batch) => ({ batch, excess: excessOverPromptAndKv(points.filter((point) => point.batch === batch), form) }));
  return (batch, prefillTokens, kvTokens) => {
    const first = levels[0] as (typeof levels)[number];
    if (batch <= first.batch) return (first.excess(prefillTokens, kvTokens) * batch) / first.batch;
    const last = levels[levels.length - 1] as (typeof levels)[number];
    if (batch >= last.batch) return last.excess(prefillTokens, kvTokens);
    const levelBatches = levels.map((level) => level.batch);
    const atLevel = (index: number): number => (levels[index] as (typeof levels)[number]).excess(prefillTokens, kvTokens);
    return monotoneCubicInSegment(levelBatches, atLevel, segmentOf(levelBatches, batch), batch);
  };
}

/**
 * One batch level's excess over P and KV (see mixingExcess). With the fitted form, the excess is interpolated over P
 * less the shape the floor alone gives it, and that shape added back: where a step costs `max(F, p + d)` and its parts
 * `max(F, p)` and a decode step on the floor F, the excess is `max(F, p + d) - max(F, p)` (p the form's prefill work,
 * d the excess at the largest prompt level, past the knee), which bends twice between prompt levels. Where the form has
 * no floor the shape is d at every P and the excess is interpolated as before.
 */
function excessOverPromptAndKv(
  points: readonly { prefill: number; kv: number; excessMs: number }[],
  form?: RooflineCoefficients,
): (prefillTokens: number, kvTokens: number) => number {
  const sorted = [...points].sort((left, right) => left.prefill - right.prefill);
  const groups: (typeof sorted)[] = [];
  for (const point of sorted) {
    const group = groups[groups.length - 1];
    if (group !== undefined && point.prefill <= (group[0] as (typeof sorted)[number]).prefill * 1.25) group.push(point);
    else groups.push([point]);
  }
  const levels = groups.map((group) => ({
    prefill: group.reduce((sum, point) => sum + point.prefill, 0) / group.length,
    line: dedupe(group.map((point) => [point.kv, point.excessMs] as const)),
  }));
  const measuredAt = (index: number, kv: number): number => flatOutside(levels[index]?.line ?? [], kv);
  return (prefillTokens, kvTokens) => {
    const shape = floorShapedExcess(form, Math.max(0, measuredAt(levels.length - 1, kvTokens)));
    const atLevel = (index: number, kv: number): number => measuredAt(index, kv) - shape((levels[index] as (typeof levels)[number]).prefill);
    const first = levels[0] as (typeof levels)[number];
    // Below the smallest prompt level the excess shrinks to none (a plain decode step), as before.
    if (prefillTokens <= first.prefill) return (measuredAt(0, kvTokens) * prefillTokens) / first.prefill;
    if (prefillTokens >= (levels[levels.length - 1] as (typeof levels)[number]).prefill) return atLevel(levels.length - 1, kvTokens) + shape(prefillTokens);
    const levelPrefills = levels.map((level) => level.prefill);
    return monotoneCubicInSegment(levelPrefills, (index) => atLevel(index, kvTokens), segmentOf(levelPrefills, prefillTokens), prefillTokens) + shape(prefillTokens);
  };
}

/** `max(F, p + d) - max(F, p)` over prompt tokens (see excessOverPromptAndKv); 0 without a form. */
function floorShapedExcess(form: RooflineCoefficients | undefined, decodeMs: number): (prefillTokens: number) => number {
  if (form === undefined) return () => 0;
  const floorMs = form.weightsFloorMs;
  return (prefillTokens) => {
    const prefillMs = prefillTokens * form.prefillPerTokenMs + ((prefillTokens * (prefillTokens + 1)) / 2) * form.prefillAttentionPerPairMs;
    return Math.max(floorMs, prefillMs + decodeMs) - Math.max(floorMs, prefillMs);
  };
}

/**
 * The monotone cubic through sorted points, held at the end values outside them. Not `piecewise`: that one is for step
 * times (never below zero, extrapolated past the last point at the mean slope), while an excess may be negative and is not extrapolated.
 */
function flatOutside(points: readonly (readonly [number, number])[], x: number): number {
  if (points.length === 0) return 0;
  const [firstX, firstY] = points[0] as readonly [number, number];
  const [lastX, lastY] = points[points.length - 1] as readonly [number, number];
  if (x <= firstX) return firstY;
  if (x >= lastX) return lastY;
  return inside(points, x);
}

/** The monotone cubic through sorted points (at least two) at `x` between the first and the last, as the table is read between its points. */
function inside(points: readonly (readonly [number, number])[], x: number): number {
  const xs = points.map(([px]) => px);
  return monotoneCubicInSegment(xs, (index) => (points[index] as readonly [number, number])[1], segmentOf(xs, x), x);
}

/** The table's prediction for one observed step, read as the twin reads it (with the profile's fitted form, if any). */
export function predictFromTable(table: MeasuredStepTable, observation: StepObservation, form?: RooflineCoefficients): number {
  if (observation.kind === 'prefill') return tableStepMs(table, 0, observation.size, 0, form);
  return tableStepMs(table, observation.size, observation.kind === 'mixed' ? (observation.prefillTokens ?? 0) : 0, observation.secondary, form);
}

/**
 * `read` (a line through points) applied to the points less the floor lift, the lift at `x` added back: exact across
 * the floor's knee where the form is, and the plain line wherever the lift is 0. Below the first point the lines are
 * carried back along their first segment (piecewise, curveThrough), so the lift is read at `x` there too.
 */
function lifted(
  points: readonly (readonly [number, number])[],
  x: number,
  liftAt: (x: number) => number,
  read: (points: readonly (readonly [number, number])[], x: number) => number,
): number {
  return read(points.map(([px, py]) => [px, py - liftAt(px)] as const), x) + liftAt(x);
}

/** Sorted by x, equal x averaged. */
function dedupe(points: readonly (readonly [number, number])[]): (readonly [number, number])[] {
  const byX = new Map<number, number[]>();
  for (const [x, y] of points) byX.set(x, [...(byX.get(x) ?? []), y]);
  return [...byX.entries()].sort((a, b) => a[0] - b[0]).map(([x, ys]) => [x, ys.reduce((s, y) => s + y, 0) / ys.length] as const);
}

/**
 * A step time through sorted points: the monotone cubic between them; below the first, carried back along the first
 * segment where it rises, at no more than the mean slope (a padded engine's jump between the first two points is
 * diluted, not carried back whole; held where either falls), never below zero; past the last, the mean slope (first
 * to last), or held where that slope falls: a step that reads more KV than any measured never costs less than the
 * last one did. A batch whose few KV points fell with KV (a noisy engine: transformers without CUDA graphs,
 * bench/real-engine/README.md) had been carried down to zero-millisecond steps at long contexts.
 */
function piecewise(points: readonly (readonly [number, number])[], x: number): number {
  const [lastX, lastY] = points[points.length - 1] as readonly [number, number];
  if (x > lastX) return Math.max(0, lastY + Math.max(0, meanSlope(points)) * (x - lastX));
  if (points.length === 1) return (points[0] as readonly [number, number])[1];
  const [firstX, firstY] = points[0] as readonly [number, number];
  if (x < firstX) {
    const [secondX, secondY] = points[1] as readonly [number, number];
    const slope = Math.min((secondY - firstY) / (secondX - firstX), meanSlope(points));
    return Math.max(0, firstY - Math.max(0, slope) * (firstX - x));
  }
  return Math.max(0, inside(points, x));
}

/** The monotone cubic through sorted points, outside them along the first or last segment (as the table's own read goes on past its last point). */
function curveThrough(points: readonly (readonly [number, number])[], x: number): number {
  if (points.length === 1) return (points[0] as readonly [number, number])[1];
  const [firstX] = points[0] as readonly [number, number];
  const [lastX] = points[points.length - 1] as readonly [number, number];
  if (x >= firstX && x <= lastX) return inside(points, x);
  const index = segmentOf(points.map(([px]) => px), x);
  const [x0, y0] = points[index] as readonly [number, number];
  const [x1, y1] = points[index + 1] as readonly [number, number];
  return y0 + ((y1 - y0) * (x - x0)) / (x1 - x0);
}

function meanSlope(points: readonly (readonly [number, number])[]): number {
  const [x0, y0] = points[0] as readonly [number, number];
  const [x1, y1] = points[points.length - 1] as readonly [number, number];
  return (y1 - y0) / (x1 - x0);
}

function fixedCost(points: readonly (readonly [number, number])[]): number {
  if (points.length === 1) return (points[0] as readonly [number, number])[1];
  const [x0, y0] = points[0] as readonly [number, number];
  const [x1, y1] = points[1] as readonly [number, number];
  return Math.min(y0, y0 - ((y1 - y0) * x0) / (x1 - x0));
}
