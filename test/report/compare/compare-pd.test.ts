import { describe, expect, it } from 'vitest';
import { comparePdRuns, formatPdComparison, pdComparisonCsv } from '../../../src/report/compare/compare-pd.js';
import type { RequestRecord } from '../../../src/types/record.js';
import type { RunData } from '../../../src/types/run.js';
import { recordAt, runOf } from '../../analysis/records.js';

/** A co-located request: server arrival at +0.01, forward at +0.01 + queue, first token 0.05 s later, 11 tokens, TPOT `tpot`. */
function colocated(offset: number, queue: number, tpot: number): RequestRecord {
  return recordAt({
    arrivalTime: offset,
    serverCreatedTime: offset + 0.01,
    queueTimeStart: offset + 0.01,
    queueTimeEnd: offset + 0.01 + queue,
    serverFirstTokenTime: offset + 0.06 + queue,
    firstTokenTime: offset + 0.065 + queue,
    finishTime: offset + 0.065 + queue + 10 * tpot,
    actualOutputTokens: 11,
    host: 'http://127.0.0.1:30001',
  });
}

/** A PD request with its phases (seconds), TTFT `ttft` and TPOT `tpot`. */
function disaggregated(offset: number, phases: Partial<RequestRecord>, ttft: number, tpot: number): RequestRecord {
  return recordAt({
    arrivalTime: offset,
    firstTokenTime: offset + ttft,
    finishTime: offset + ttft + 10 * tpot,
    actualOutputTokens: 11,
    host: 'http://127.0.0.1:30002',
    prefillHost: 'http://127.0.0.1:30001',
    decodeHost: 'http://127.0.0.1:30002',
    ...phases,
  });
}

function withConfig(run: RunData, config: Record<string, unknown>): RunData {
  return { ...run, config: { ...run.config, ...config } };
}

describe('comparing a PD run against a co-located run', () => {
  it('says nothing when no run is PD', () => {
    const colocatedRun = runOf([colocated(0, 0.02, 0.03)]);
    expect(comparePdRuns([{ label: 'a', run: colocatedRun }, { label: 'b', run: colocatedRun }])).toBeUndefined();
  });

  it('names the phases that moved and by how much, with the transfer and the decode queue added by PD', () => {
    const base = withConfig(runOf(Array.from({ length: 10 }, (_, index) => colocated(index, 0.02, 0.03))), { numGpus: 2 });
    const pd = withConfig(
      runOf(Array.from({ length: 10 }, (_, index) => disaggregated(index, { prefillQueueTime: 0.005, prefillForwardTime: 0.05, kvTransferTime: 0.012, decodeQueueTime: 0.001 }, 0.08, 0.01))),
      { numGpus: 2, pdDisaggregation: true },
    );
    const [comparison] = comparePdRuns([{ label: 'colocated', run: base }, { label: '1P1D', run: pd }]) ?? [];
    const move = (phase: string) => comparison?.moves.find((entry) => entry.phase === phase && entry.statistic === 'p50');
    expect(move('queue before prefill')?.changeMs).toBeCloseTo(-15, 3);
    expect(move('prefill compute')?.changeMs).toBeCloseTo(0, 3);
    // Co-located has no transfer: all of it is added, and its baseline reads as none, not 0 ms.
    expect(move('KV transfer')).toMatchObject({ baselineMs: null });
    expect(move('KV transfer')?.changeMs).toBeCloseTo(12, 3);
    expect(move('TPOT')?.changeMs).toBeCloseTo(-20, 3);
    expect(move('TPOT')?.changeShare).toBeCloseTo(-2 / 3, 4);
    const text = formatPdComparison(comparison === undefined ? [] : [comparison]);
    expect(text).toMatch(/Moved most: TPOT p50 −20\.00 ms, TPOT p99 −20\.00 ms, queue before prefill p50 −15\.00 ms/);
    expect(text).toMatch(/KV transfer p50\s+none\s+12\.00\s+\+12\.00 ms/);
    expect(text).not.toContain('Caution');
    expect(pdComparisonCsv(comparison === undefined ? [] : [comparison]).split('\n')[0]).toBe('baseline,compared,baseline_gpus,compared_gpus,phase,statistic,baseline_ms,compared_ms,change_ms,change_share');
  });

  it('leaves phases empty, not zero, when the PD run has no phase columns, and cautions on unequal GPU counts', () => {
    const base = withConfig(runOf([colocated(0, 0.02, 0.03)]), { numGpus: 4 });
    const pd = withConfig(runOf([disaggregated(0, {}, 0.08, 0.01)]), { numGpus: 2, pdDisaggregation: true });
    const [comparison] = comparePdRuns([{ label: 'colocated', run: base }, { label: 'pd', run: pd }]) ?? [];
    expect(comparison?.moves.find((entry) => entry.phase === 'prefill compute')).toMatchObject({ comparedMs: null, changeMs: null });
    expect(comparison?.moves.find((entry) => entry.phase === 'TTFT')?.changeMs).not.toBeNull();
    expect(formatPdComparison(comparison === undefined ? [] : [comparison])).toMatch(/Caution: the baseline ran on 4 GPUs and the compared run on 2/);
  });
});
