import { join } from 'node:path';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import type { NodeSummary, Statistics } from '../../types/summary.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { nodesInIndexOrder } from './node-order.js';
import { csvField, csvLine, formatSeconds } from '../csv/csv-format.js';

export const NODES_CSV = 'nodes.csv';

const LATENCY_FIELDS = [
  ['ttft', (node: NodeSummary) => node.ttft],
  ['total_latency', (node: NodeSummary) => node.totalLatency],
  ['queue_time_in_server', (node: NodeSummary) => node.queueTimeInServer],
  ['pure_queue_time', (node: NodeSummary) => node.pureQueueTime],
] as const;
const STATISTICS_KEYS = ['mean', 'p50', 'p90', 'p99', 'max'] as const;

export const NODES_CSV_COLUMNS: readonly string[] = [
  // The index `--failure-schedule` uses, beside the URL: events name nodes by index, records by URL.
  'node',
  'host',
  'requests',
  'succeeded',
  'failed',
  'share',
  'cache_hit_ratio',
  ...LATENCY_FIELDS.flatMap(([name]) => STATISTICS_KEYS.map((key) => `${name}_${key}`)),
  'peak_in_flight',
  'mean_in_flight',
  // Last, so the columns before it keep their places: the machine (a Slurm node) the server ran on, empty on this host.
  'placed_on',
];

function ratio(value: number | null): string {
  return value === null ? '' : value.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
}

export function nodesCsvRow(node: NodeSummary): string {
  const fields = [node.node === null ? '' : String(node.node), csvField(node.host), String(node.requests), String(node.succeeded), String(node.failed), ratio(node.share), ratio(node.cacheHitRatio)];
  for (const [, pick] of LATENCY_FIELDS) {
    const statistics: Statistics | null = pick(node);
    for (const key of STATISTICS_KEYS) fields.push(formatSeconds(statistics?.[key]));
  }
  fields.push(String(node.peakInFlight), ratio(node.meanInFlight), csvField(node.placedOn ?? ''));
  return csvLine(fields);
}

/** `nodes.csv`: one row per server of a routing test (latencies in seconds). Nothing for a single-node run. */
export const nodesReporter: Reporter = {
  name: 'nodes',
  async write(context: ReportContext): Promise<string[]> {
    const routing = context.summary.routing;
    if (!routing) return [];
    const path = join(context.outputDirectory, NODES_CSV);
    await writeFileAtomic(path, [csvLine(NODES_CSV_COLUMNS.map((name) => name)), ...nodesInIndexOrder(routing.nodes).map(nodesCsvRow)].join(''));
    return [path];
  },
};
