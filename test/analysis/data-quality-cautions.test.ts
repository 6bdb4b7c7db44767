import { describe, expect, it } from 'vitest';
import { dataQualityCautions, VIRTUAL_ITL_REQUEST_LIMIT } from '../../src/analysis/data-quality-cautions.js';
import { summarize } from '../../src/analysis/summarize.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import type { RequestRecord } from '../../src/types/record.js';
import { fullyTracedRecord, runOf, T0 } from './records.js';

describe('data quality cautions: numbers that are wrong though no field was left out are said (issue 27)', () => {
  it('flags token counts from a tokenizer the simulated server does not share, with the share it counted', () => {
    // The prompts hold 300 tokenizer tokens; the simulated server counted 100 (words).
    const records = [fullyTracedRecord(0, { inputLength: 300 }), fullyTracedRecord(1, { inputLength: 300 })];
    const run = runOf(records, { target: 'sim' });
    run.config['tokenizerPath'] = './tokenizer.json';
    const summary = summarize(run);
    expect(summary.dataQuality.cautions).toHaveLength(1);
    expect(summary.dataQuality.cautions?.[0]).toMatch(/counts words, not the tokens of the tokenizer \.\/tokenizer\.json \(it reported 33% of the tokenizer's count\)/);
    const text = formatTerminalSummary(run, summary);
    expect(text).toContain('Data quality');
    expect(text).toMatch(/Caution: input tokens and input tok\/s are the simulated server's counts/);
    expect(buildReportHtml(run, summary, [])).toContain('<p class="warning">Caution: input tokens and input tok/s are the simulated server');
  });

  it('says nothing for a real server with a tokenizer, or the simulated one without', () => {
    const sglang = runOf([fullyTracedRecord(0)], { target: 'sglang' });
    sglang.config['tokenizerPath'] = './tokenizer.json';
    expect(summarize(sglang).dataQuality.cautions).toBeUndefined();
    const plain = runOf([fullyTracedRecord(0)], { target: 'sim' });
    expect(summarize(plain).dataQuality.cautions).toBeUndefined();
    expect(formatTerminalSummary(plain, summarize(plain))).not.toContain('Data quality');
  });

  it('flags ITL dropped for size in virtual time, and only above the limit', () => {
    const bare = (count: number): RequestRecord[] =>
      Array.from({ length: count }, (_, index) => ({ requestId: `r${index}`, datasetIndex: index, warmup: false, inputLength: 10, expectedOutputLength: 4, scheduledTime: T0, success: true, actualOutputTokens: 4 }));
    const info = { info: runOf([], { simulated: true, target: 'sim' }).info, config: {} };
    const above = dataQualityCautions(info, bare(VIRTUAL_ITL_REQUEST_LIMIT + 1));
    expect(above).toHaveLength(1);
    expect(above[0]).toMatch(/no inter-token latencies \(ITL\): virtual time keeps per-token times for runs of at most 200,000 requests and this one has 200,001/);
    expect(dataQualityCautions(info, bare(VIRTUAL_ITL_REQUEST_LIMIT))).toEqual([]);
  });

  it('names PD requests whose phases add up to more than their TTFT (they cannot), and says nothing when they fit', () => {
    // TTFT 50 ms; phases 10 + 20 + 15 + 2 = 47 ms fit (the other 3 ms are the network); the second adds up to 62 ms.
    const pd = (index: number, kvTransferTime: number): RequestRecord =>
      fullyTracedRecord(index, { arrivalTime: T0, firstTokenTime: T0 + 0.05, prefillQueueTime: 0.01, prefillForwardTime: 0.02, kvTransferTime, decodeQueueTime: 0.002 });
    const fits = runOf([pd(0, 0.015), pd(1, 0.015)], { target: 'sim' });
    expect(summarize(fits).dataQuality.cautions).toBeUndefined();
    const run = runOf([pd(0, 0.015), pd(1, 0.03), pd(2, 0.015)], { target: 'sim' });
    const summary = summarize(run);
    expect(summary.dataQuality.cautions).toHaveLength(1);
    expect(summary.dataQuality.cautions?.[0]).toMatch(/^1 of 3 PD requests have phases .* adding up to more than their TTFT, which they cannot \(the worst, \S+, by 12\.000 ms\)/);
    expect(formatTerminalSummary(run, summary)).toMatch(/Caution: 1 of 3 PD requests have phases/);
  });
});
