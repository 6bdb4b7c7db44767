import type { DerivedColumnName, Statistics, Summary } from '../types/summary.js';

/** The latencies the first users' framework printed as avg/p50/p95/p99 in milliseconds (servelab's names are theirs). */
const FIRST_USERS_LATENCIES = [
  'server_latency',
  'total_latency',
  'ttft',
  'queue_time_in_router',
  'queue_time_in_server',
  'pure_queue_time',
  'tokenize_time',
] as const satisfies readonly DerivedColumnName[];

type FirstUsersLatency = (typeof FIRST_USERS_LATENCIES)[number];

/**
 * The first users' names for a run's metrics, beside servelab's: throughputs per second and, for each latency they
 * printed, `avg_*`, `p50_*`, `p95_*`, `p99_*` in MILLISECONDS (servelab's own `latencies` are seconds). A latency
 * with no value (no succeeded request carried its inputs) is null.
 */
export type FirstUsersMetrics = {
  request_throughput: number;
  input_throughput: number;
  output_throughput: number;
} & { [Name in `${'avg' | 'p50' | 'p95' | 'p99'}_${FirstUsersLatency}`]: number | null };

const milliseconds = (seconds: number | undefined): number | null => (seconds === undefined ? null : seconds * 1000);

export function firstUsersMetrics(summary: Summary): FirstUsersMetrics {
  const names: Record<string, number | null> = {
    request_throughput: summary.throughput.requestsPerSecond,
    input_throughput: summary.throughput.inputTokensPerSecond,
    output_throughput: summary.throughput.outputTokensPerSecond,
  };
  for (const name of FIRST_USERS_LATENCIES) {
    const statistics: Statistics | null = summary.latencies[name];
    names[`avg_${name}`] = milliseconds(statistics?.mean);
    names[`p50_${name}`] = milliseconds(statistics?.p50);
    names[`p95_${name}`] = milliseconds(statistics?.p95);
    names[`p99_${name}`] = milliseconds(statistics?.p99);
  }
  return names as FirstUsersMetrics;
}

/** A run's metrics under servelab's names and the first users' (what a test result and `analyzeResults` answer). */
export type ResultMetrics = Summary & FirstUsersMetrics;

/** Succeeded requests / all requests (0 for a run without requests): the first users' `success_rate`. */
export function successRate(summary: Summary): number {
  return summary.counts.total === 0 ? 0 : summary.counts.succeeded / summary.counts.total;
}

/** The metrics with the first users' names added (summary.json is written from the summary itself, without them). */
export function withFirstUsersNames(summary: Summary): ResultMetrics {
  return { ...summary, ...firstUsersMetrics(summary) };
}
