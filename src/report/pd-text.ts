import type { PdNodeRow, PdSummary, Statistics } from '../types/summary.js';

/** One titled part of a PD run's summary as text: a table (header and rows), for the terminal and report.html alike. */
export interface PdTextSection {
  title: string;
  /** What the table says and how it was made, in one sentence. */
  note: string;
  header: string[];
  rows: string[][];
}

function ms(statistics: Statistics | null | undefined, key: 'p50' | 'p99'): string {
  if (statistics === null || statistics === undefined) return '-';
  const value = statistics[key] * 1000;
  return Math.abs(value) >= 100 ? value.toFixed(1) : Math.abs(value) >= 1 ? value.toFixed(2) : value.toFixed(3);
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/** Whether any node has a value for this phase: a phase no node has is left out of the table, not shown as dashes. */
function anyPhase(nodes: readonly PdNodeRow[], key: keyof PdNodeRow): boolean {
  return nodes.some((node) => node[key] !== null && node[key] !== undefined);
}

/**
 * The PD sections: prefill nodes, decode nodes, the pairs and their balance, and (when the phase columns have values)
 * the phase breakdown by TTFT percentile and the KV transfers over time. Milliseconds throughout.
 */
export function pdTextSections(pd: PdSummary): PdTextSection[] {
  const sections: PdTextSection[] = [];
  const prefillPhases = ([
    ['prefillQueueTimeSeconds', 'queue'],
    ['prefillForwardTimeSeconds', 'forward'],
    ['kvTransferTimeSeconds', 'KV transfer'],
  ] as const).filter(([key]) => anyPhase(pd.prefillNodes, key));
  sections.push({
    title: 'Prefill nodes',
    note: prefillPhases.length === 0 ? 'Requests each prefill server took. The phase columns are empty in this run, so no phase is shown.' : 'Requests each prefill server took, and their prefill-side phases (p50 / p99, ms).',
    header: ['prefill server', 'requests', 'failed', 'share', ...prefillPhases.map(([, label]) => `${label} p50 / p99 (ms)`)],
    rows: pd.prefillNodes.map((node) => [node.host, String(node.requests), String(node.failed), percent(node.share), ...prefillPhases.map(([key]) => `${ms(node[key], 'p50')} / ${ms(node[key], 'p99')}`)]),
  });
  const decodeQueue = anyPhase(pd.decodeNodes, 'decodeQueueTimeSeconds');
  sections.push({
    title: 'Decode nodes',
    note: 'Requests each decode server took (it answered them), their TTFT and TPOT, and their decode queue when measured (p50 / p99, ms).',
    header: ['decode server', 'requests', 'failed', 'share', 'TTFT p50 / p99 (ms)', 'TPOT p50 / p99 (ms)', ...(decodeQueue ? ['decode queue p50 / p99 (ms)'] : [])],
    rows: pd.decodeNodes.map((node) => [
      node.host, String(node.requests), String(node.failed), percent(node.share),
      `${ms(node.ttftSeconds, 'p50')} / ${ms(node.ttftSeconds, 'p99')}`,
      `${ms(node.tpotSeconds, 'p50')} / ${ms(node.tpotSeconds, 'p99')}`,
      ...(decodeQueue ? [`${ms(node.decodeQueueTimeSeconds, 'p50')} / ${ms(node.decodeQueueTimeSeconds, 'p99')}`] : []),
    ]),
  });
  const balance = pd.pairBalance;
  sections.push({
    title: 'Pairs (prefill → decode)',
    note: `${balance.pairsUsed} of ${balance.pairsPossible} possible pairs used; busiest pair / mean per pair ${balance.maxOverMean.toFixed(3)}, coefficient of variation ${balance.coefficientOfVariation === null ? '-' : balance.coefficientOfVariation.toFixed(3)} (0: even).`,
    header: ['prefill server', 'decode server', 'requests', 'share'],
    rows: pd.pairs.map((pair) => [pair.prefillHost, pair.decodeHost, String(pair.requests), percent(pair.share)]),
  });
  if (pd.phasesByTtftPercentile !== undefined) {
    sections.push({
      title: 'TTFT by phase at p50 / p90 / p99',
      note: 'Mean of each phase over the requests whose TTFT ranks around the percentile (the band, ±2.5 percentiles, ±0.5 at p99); "rest" is TTFT no phase covers (client and router hops, the first decode step). ms.',
      header: ['percentile', 'TTFT (ms)', 'requests', 'prefill queue', 'prefill forward', 'KV transfer', 'decode queue', 'rest', 'dominant'],
      rows: pd.phasesByTtftPercentile.map((row) => [
        `p${row.percentile}`,
        (row.ttftSeconds * 1000).toFixed(2),
        String(row.requests),
        ...(['prefill_queue_time', 'prefill_forward_time', 'kv_transfer_time', 'decode_queue_time', 'rest_of_ttft'] as const).map((part) => (row.meanSeconds[part] * 1000).toFixed(2)),
        `${row.dominant} (${percent(row.dominantShare)})`,
      ]),
    });
  }
  if (pd.kvTransferOverTime !== undefined) {
    sections.push({
      title: 'KV transfers over time',
      note: 'Requests binned by arrival: their KV transfer time (p50 / p99, ms) and the prompt tokens whose KV cache moved, per second.',
      header: ['from (s)', 'to (s)', 'requests', 'KV transfer p50 / p99 (ms)', 'tokens moved / s'],
      rows: pd.kvTransferOverTime.map((bin) => [String(bin.startSinceT0Seconds), String(bin.endSinceT0Seconds), String(bin.requests), `${ms(bin.kvTransferTimeSeconds, 'p50')} / ${ms(bin.kvTransferTimeSeconds, 'p99')}`, bin.transferredTokensPerSecond.toFixed(0)]),
    });
  }
  return sections;
}
