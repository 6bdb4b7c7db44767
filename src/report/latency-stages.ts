import type { DerivedColumnName, PdStageColumn, Statistics, Summary } from '../types/summary.js';

/** A column a latency table shows: a derived column, the pooled inter-token latency, or a PD stage column. */
export type LatencyStageName = DerivedColumnName | 'itl' | PdStageColumn;

/** One row of a latency table (report.html's, the terminal's): the column it reads and its statistics. */
export interface LatencyStageRow {
  name: LatencyStageName;
  /** The terminal's short label. */
  label: string;
  /** What the row measures, where its name alone would mislead (a PD run's server stages); absent elsewhere. */
  meaning?: string;
  statistics: Statistics | null;
}

/** A co-located run's rows for the terminal, in lifecycle order: label, column. */
const COLOCATED_ROWS: readonly [string, DerivedColumnName | 'itl'][] = [
  ['TTFT', 'ttft'],
  ['TPOT', 'tpot'],
  ['ITL', 'itl'],
  ['E2E latency', 'total_latency'],
  ['Queue in router', 'queue_time_in_router'],
  ['Network (router to server)', 'network_time'],
  ['Tokenize', 'tokenize_time'],
  ['Pure queue (server)', 'pure_queue_time'],
  ['Queue in server (to 1st token)', 'queue_time_in_server'],
  ['Prefill', 'prefill_time'],
  ['Decode', 'decode_time'],
];

/**
 * A PD run's rows, in the order of a request's life across both servers: label, column, what it measures. The
 * decode server (the one that answered) stamps the record's server instants, so the generic server stages are its own;
 * the prefill half comes from the PD phase columns (docs/metrics.md, "PD phases"). The decode server's tokenize is not
 * measured (its received-to-waiting-queue interval is the wait for the KV: tokenize_time is empty on a PD request), and
 * prefill_time is the prefill server's forward. pure_queue_time and decode_queue_time are the same interval (the
 * decode scheduler's waiting queue, SGLang's `queue_time` there), shown once.
 */
const PD_ROWS: readonly [string, LatencyStageName, string | undefined][] = [
  ['TTFT', 'ttft', undefined],
  ['TPOT', 'tpot', undefined],
  ['ITL', 'itl', undefined],
  ['E2E latency', 'total_latency', undefined],
  ['Queue in router', 'queue_time_in_router', undefined],
  ['Network (router to decode srv)', 'network_time', 'router to the decode server'],
  ['Prefill srv queue', 'prefill_queue_time', 'prefill server: arrival to its forward, through the bootstrap and waiting queues'],
  ['Prefill (prefill srv forward)', 'prefill_time', "prefill server's forward: the prompt's prefill to its first token"],
  ['KV transfer (prefill to decode)', 'kv_transfer_time', "the KV's trip: prefill done to the last byte at the decode server"],
  ['Decode srv wait for KV', 'kv_transfer_wait_time', 'decode server: its KV space reserved to the KV arrived, overlapping the prefill phases'],
  ['Decode srv queue (KV arrived)', 'pure_queue_time', 'decode server: the KV arrived to joining the running batch'],
  ['Decode srv to 1st token', 'queue_time_in_server', 'decode server: received to its first token, the whole prefill half included'],
  ['Decode', 'decode_time', undefined],
];

/** What the remaining server columns measure in a PD run (report.html lists every column). */
const PD_MEANINGS: Partial<Record<LatencyStageName, string>> = {
  server_ttft: 'decode server: received to its first token, the whole prefill half included',
  server_latency: 'router send to the last token, both servers',
};

function statisticsOf(summary: Summary, name: LatencyStageName): Statistics | null {
  if (name === 'itl') return summary.interTokenLatency;
  if (name in summary.latencies) return summary.latencies[name as DerivedColumnName];
  return summary.pd?.stages?.[name as PdStageColumn] ?? null;
}

/** The terminal's latency rows: the co-located lifecycle, or a PD run's stages across both servers. */
export function terminalLatencyRows(summary: Summary): LatencyStageRow[] {
  if (summary.pd === undefined) return COLOCATED_ROWS.map(([label, name]) => ({ name, label, statistics: statisticsOf(summary, name) }));
  return PD_ROWS.map(([label, name, meaning]) => ({ name, label, ...(meaning === undefined ? {} : { meaning }), statistics: statisticsOf(summary, name) }));
}

/**
 * report.html's latency rows: every derived column in the summary's order, then the inter-token latency. In a PD run
 * each server stage says what it measures and the PD stage columns follow the network hop, in their order in a
 * request's life; a stage no request has (tokenize_time there) is left out by its empty statistics.
 */
export function reportLatencyRows(summary: Summary): LatencyStageRow[] {
  const generic = Object.keys(summary.latencies) as DerivedColumnName[];
  if (summary.pd === undefined) return [...generic, 'itl' as const].map((name) => ({ name, label: name, statistics: statisticsOf(summary, name) }));
  const meanings = new Map<LatencyStageName, string | undefined>(PD_ROWS.map(([, name, meaning]) => [name, meaning]));
  const order: LatencyStageName[] = [];
  for (const name of generic) {
    if (name === 'prefill_time' || name === 'pure_queue_time') continue;
    order.push(name);
    if (name === 'network_time') order.push('prefill_queue_time', 'prefill_time', 'kv_transfer_time', 'kv_transfer_wait_time', 'pure_queue_time');
  }
  order.push('itl');
  return order.map((name) => {
    const meaning = meanings.get(name) ?? PD_MEANINGS[name];
    return { name, label: name, ...(meaning === undefined ? {} : { meaning }), statistics: statisticsOf(summary, name) };
  });
}
