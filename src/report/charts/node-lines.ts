import type { NodeSummary } from '../../types/summary.js';
import type { LineSeries } from './chart-model.js';
import { nodeLabel, nodesInIndexOrder } from '../nodes/node-order.js';
import { seriesColour } from './series-palette.js';

/** Up to this many nodes a chart draws one line each; past it, one line per node would be a tangle of repeated colours. */
export const MAX_NODE_LINES = 8;
/** How many of the worst nodes (highest mean) a chart of many nodes still names, one line each. */
export const WORST_NODES_NAMED = 3;
/** Points of the common time grid the across-node percentiles are taken on, at most. */
const MAX_GRID_POINTS = 1000;

const MEDIAN_COLOUR = '#555555';
const P90_COLOUR = '#aaaaaa';

/** One node's readings over time, keyed by the URL its records (or its scrape) name it by. */
export interface NodePoints {
  host: string;
  xs: ArrayLike<number>;
  ys: ArrayLike<number>;
}

function meanOf(values: ArrayLike<number>): number {
  let sum = 0;
  let count = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index] as number;
    if (Number.isFinite(value)) {
      sum += value;
      count++;
    }
  }
  return count === 0 ? -Infinity : sum / count;
}

/** The times every node's line is read at: the union of their readings, or an even grid when that is too many. */
function commonGrid(nodes: readonly NodePoints[]): number[] {
  const times = new Set<number>();
  for (const node of nodes) for (let index = 0; index < node.xs.length; index++) times.add(node.xs[index] as number);
  const sorted = [...times].sort((a, b) => a - b);
  if (sorted.length <= MAX_GRID_POINTS) return sorted;
  const first = sorted[0] as number;
  const step = ((sorted[sorted.length - 1] as number) - first) / (MAX_GRID_POINTS - 1);
  return Array.from({ length: MAX_GRID_POINTS }, (_, index) => first + index * step);
}

/** A step line's value at each grid time (its last reading at or before it); NaN before its first reading. */
function readAt(node: NodePoints, grid: readonly number[]): Float64Array {
  const values = new Float64Array(grid.length);
  let cursor = -1;
  grid.forEach((time, index) => {
    while (cursor + 1 < node.xs.length && (node.xs[cursor + 1] as number) <= time) cursor++;
    values[index] = cursor < 0 ? Number.NaN : (node.ys[cursor] as number);
  });
  return values;
}

/** The q-quantile (nearest rank) of the finite values. */
function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1))] as number;
}

/**
 * Lines for a per-node chart, nodes named by index ("node 2") and in index order. Up to MAX_NODE_LINES nodes, one line
 * each; beyond, the median and p90 across nodes at each instant, and the WORST_NODES_NAMED nodes with the highest mean
 * named: a 64-node cluster reads as its spread and its outliers, not as 64 lines in 10 repeating colours.
 */
export function nodeLines(points: readonly NodePoints[], nodes: readonly Pick<NodeSummary, 'node' | 'host'>[]): LineSeries[] {
  const byHost = new Map(nodes.map((node) => [node.host, node]));
  // A scraped series is keyed by the server's metrics URL (`<server URL>/metrics`), a record's by the server URL.
  const nodeOf = (host: string): Pick<NodeSummary, 'node' | 'host'> => {
    const known = byHost.get(host) ?? byHost.get(host.replace(/\/metrics$/, ''));
    return { node: known?.node ?? null, host };
  };
  const ordered = nodesInIndexOrder(points.map((point) => nodeOf(point.host))).map((node) => ({
    label: nodeLabel(node),
    points: points.find((point) => point.host === node.host) as NodePoints,
  }));
  if (ordered.length <= MAX_NODE_LINES) {
    return ordered.map(({ label, points: line }, index) => ({ name: label, colour: seriesColour(index), xs: line.xs, ys: line.ys }));
  }
  const grid = commonGrid(points);
  const readings = ordered.map(({ points: line }) => readAt(line, grid));
  const across = (q: number): Float64Array =>
    Float64Array.from(grid, (_, index) => quantile(readings.map((values) => values[index] as number).filter(Number.isFinite), q));
  const worst = ordered
    .map((entry, index) => ({ ...entry, mean: meanOf(readings[index] as Float64Array) }))
    .sort((a, b) => b.mean - a.mean)
    .slice(0, WORST_NODES_NAMED);
  return [
    { name: `median of ${ordered.length} nodes`, colour: MEDIAN_COLOUR, xs: grid, ys: across(0.5) },
    { name: `p90 of ${ordered.length} nodes`, colour: P90_COLOUR, xs: grid, ys: across(0.9) },
    ...worst.map(({ label, points: line }, index) => ({ name: `${label} (highest mean${index === 0 ? '' : ` #${index + 1}`})`, colour: seriesColour(index), xs: line.xs, ys: line.ys })),
  ];
}
