import type { Summary } from '../types/summary.js';

/**
 * The six metrics the twin is judged by (throughput, TTFT p50/p90, TPOT p50, E2E p50/p90), each read off a summary as
 * summary.json has it (requests per second; seconds): calibrate's validation compares them between the server and the
 * twin (src/experiments/validate-profiles.ts), and every virtual-time run's sensitivity band moves them
 * (src/orchestration/virtual-time/twin-sensitivity.ts).
 */
export const TWIN_HEADLINE_METRICS = [
  ['throughput', 'throughput', (summary: Summary) => summary.throughput.requestsPerSecond],
  ['ttftP50', 'TTFT p50', (summary: Summary) => summary.latencies.ttft?.p50],
  ['ttftP90', 'TTFT p90', (summary: Summary) => summary.latencies.ttft?.p90],
  ['tpotP50', 'TPOT p50', (summary: Summary) => summary.latencies.tpot?.p50],
  ['e2eP50', 'E2E p50', (summary: Summary) => summary.latencies.total_latency?.p50],
  ['e2eP90', 'E2E p90', (summary: Summary) => summary.latencies.total_latency?.p90],
] as const;

export type TwinHeadlineMetricKey = (typeof TWIN_HEADLINE_METRICS)[number][0];
