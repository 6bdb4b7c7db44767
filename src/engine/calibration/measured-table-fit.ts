import type { MeasuredStepTable } from '../../types/engine.js';
import { interpolateStepMs } from '../profile/measured-table.js';
import type { StepObservation } from './fit-profile.js';
import { leastSquares } from './least-squares.js';

/**
 * Builds a measured step table from calibration observations, for engines whose step time the roofline formula cannot
 * describe. The sweep measures two families of steps: prefill steps alone (batch 1, several prompt lengths) and decode
 * steps alone (several batch sizes, each at one or more KV lengths). The table is filled from them:
 *
 * - decode plane (prefill 0): for each measured batch size, step time is piecewise linear in KV tokens through that
 *   batch's points (one point: the KV slope of the nearest batch with two); batches in between are interpolated.
 * - prefill row (no decode): the measured prefill steps; prefill 0 with no decode is the line through the first two
 *   prefill points taken back to zero tokens, the step's fixed cost.
 * - mixed steps (decode and prefill together, which engines with mixed batches run): decode step + prefill step - the
 *   fixed cost, so the fixed cost is paid once; plus, where the sweep measured mixed steps, what they cost beyond
 *   that sum, fitted as excessMs = a * prefillTokens * kvTokens + b * prefillTokens (an engine whose attention runs
 *   every query of the step over the whole batch's KV pays the first term; one that mixes for free fits both at 0).
 *   A mixed step never costs less than its decode part or its prefill part alone.
 */
export function buildMeasuredTable(observations: readonly StepObservation[]): MeasuredStepTable | null {
  const prefill = observations.filter((o) => o.kind === 'prefill').sort((a, b) => a.size - b.size);
  const decode = observations.filter((o) => o.kind === 'decode');
  if (prefill.length === 0 || decode.length === 0) return null;

  const prefillPoints = dedupe(prefill.map((o) => [o.size, o.stepMs] as const));
  const fixedMs = Math.max(0, fixedCost(prefillPoints));
  const prefillTokens = [0, ...prefillPoints.map(([tokens]) => tokens)];
  const prefillMs = [fixedMs, ...prefillPoints.map(([, ms]) => ms)];

  const batches = [...new Set(decode.map((o) => o.size))].sort((a, b) => a - b);
  const lines = batches.map((batch) => dedupe(decode.filter((o) => o.size === batch).map((o) => [o.secondary, o.stepMs] as const)));
  const slopeOf = (points: readonly (readonly [number, number])[]): number | null => {
    if (points.length < 2) return null;
    const [x0, y0] = points[points.length - 2] as readonly [number, number];
    const [x1, y1] = points[points.length - 1] as readonly [number, number];
    return (y1 - y0) / (x1 - x0);
  };
  const kvTokens = [0, ...new Set(decode.map((o) => o.secondary))].sort((a, b) => a - b).filter((v, i, all) => i === 0 || v > (all[i - 1] as number));
  const decodeAt = (batchIndex: number, kv: number): number => {
    const points = lines[batchIndex] as (readonly [number, number])[];
    if (points.length >= 2) return piecewise(points, kv);
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

  const decodeSequences = [0, ...batches];
  const partsTable: MeasuredStepTable = {
    decodeSequences,
    prefillTokens,
    kvTokens,
    stepMs: decodeSequences.map((batch, batchAxisIndex) =>
      prefillTokens.map((_tokens, prefillIndex) =>
        kvTokens.map((kv) => {
          const prefillPart = prefillMs[prefillIndex] as number;
          if (batch === 0) return prefillPart;
          const decodePart = decodeAt(batchAxisIndex - 1, kv);
          return prefillIndex === 0 ? decodePart : decodePart + prefillPart - fixedMs;
        }),
      ),
    ),
  };
  const sumOfParts = (batch: number, prefill: number, kv: number): number =>
    interpolateStepMs(partsTable, batch, 0, kv) + interpolateStepMs(partsTable, 0, prefill, 0) - fixedMs;
  const excess = mixingExcess(observations.filter((o) => o.kind === 'mixed'), sumOfParts);
  if (excess === null) return partsTable;
  const stepMs = partsTable.stepMs.map((plane, batchIndex) =>
    plane.map((row, prefillIndex) =>
      row.map((partsMs, kvIndex) => {
        const tokens = prefillTokens[prefillIndex] as number;
        if (batchIndex === 0 || tokens === 0) return partsMs;
        const kv = kvTokens[kvIndex] as number;
        const floorMs = Math.max(interpolateStepMs(partsTable, decodeSequences[batchIndex] as number, 0, kv), prefillMs[prefillIndex] as number);
        return Math.max(floorMs, partsMs + excess.perPrefillKvPairMs * tokens * kv + excess.perPrefillTokenMs * tokens);
      }),
    ),
  );
  return { decodeSequences, prefillTokens, kvTokens, stepMs };
}

/**
 * What measured mixed steps cost beyond decode step + prefill step - the fixed cost, as a * P * kv + b * P (P prefill
 * tokens, kv the decoding batch's KV tokens). With mixed steps at one KV size only, b alone; none measured: null.
 */
export function mixingExcess(
  mixed: readonly StepObservation[],
  sumOfParts: (batch: number, prefillTokens: number, kvTokens: number) => number,
): { perPrefillKvPairMs: number; perPrefillTokenMs: number } | null {
  if (mixed.length === 0) return null;
  // Scaled so that both columns are of order one: P * kv in 1e6 pairs, P in 1e3 tokens.
  const rows = mixed.map((o) => [((o.prefillTokens ?? 0) * o.secondary) / 1e6, (o.prefillTokens ?? 0) / 1e3]);
  const targets = mixed.map((o) => o.stepMs - sumOfParts(o.size, o.prefillTokens ?? 0, o.secondary));
  const distinctKv = new Set(mixed.map((o) => Math.round(o.secondary))).size;
  const solution = distinctKv >= 2 ? leastSquares(rows, targets) : leastSquares(rows, targets, new Set([0]));
  if (solution === null) return null;
  return { perPrefillKvPairMs: (solution[0] as number) / 1e6, perPrefillTokenMs: (solution[1] as number) / 1e3 };
}

/** The table's prediction for one observed step. */
export function predictFromTable(table: MeasuredStepTable, observation: StepObservation): number {
  if (observation.kind === 'prefill') return interpolateStepMs(table, 0, observation.size, 0);
  return interpolateStepMs(table, observation.size, observation.kind === 'mixed' ? (observation.prefillTokens ?? 0) : 0, observation.secondary);
}

/** Sorted by x, equal x averaged. */
function dedupe(points: readonly (readonly [number, number])[]): (readonly [number, number])[] {
  const byX = new Map<number, number[]>();
  for (const [x, y] of points) byX.set(x, [...(byX.get(x) ?? []), y]);
  return [...byX.entries()].sort((a, b) => a[0] - b[0]).map(([x, ys]) => [x, ys.reduce((s, y) => s + y, 0) / ys.length] as const);
}

function piecewise(points: readonly (readonly [number, number])[], x: number): number {
  let index = 0;
  while (index < points.length - 2 && x > (points[index + 1] as readonly [number, number])[0]) index++;
  const [x0, y0] = points[index] as readonly [number, number];
  const [x1, y1] = points[index + 1] as readonly [number, number];
  if (x <= x0 && index === 0) return y0;
  return Math.max(0, y0 + ((y1 - y0) * (x - x0)) / (x1 - x0));
}

function fixedCost(points: readonly (readonly [number, number])[]): number {
  if (points.length === 1) return (points[0] as readonly [number, number])[1];
  const [x0, y0] = points[0] as readonly [number, number];
  const [x1, y1] = points[1] as readonly [number, number];
  return Math.min(y0, y0 - ((y1 - y0) * x0) / (x1 - x0));
}
