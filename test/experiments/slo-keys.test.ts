import { describe, expect, it } from 'vitest';
import { resolveNodeTestConfig } from '../../src/config/node-test-config.js';
import { SLO_NAMES } from '../../src/config/slo-targets.js';
import { analyzeResults } from '../../src/experiments/analyze-results.js';
import { parseSweepPlan } from '../../src/experiments/sweep/sweep-plan.js';
import type { SloTargets } from '../../src/types/summary.js';
import { fullyTracedRecord, runOf } from '../analysis/records.js';

// Every request of this run has TTFT 50 ms, TPOT 20 ms and total latency 250 ms (see records.ts).
const run = runOf([fullyTracedRecord(0), fullyTracedRecord(1), fullyTracedRecord(2)]);
const source = { outputDirectory: '/nowhere', run };
/** An objective each request misses (10 ms against 50, 20 and 250 ms). */
const MISSED_MS = 10;

describe('SLO objectives are read in both spellings or refused, never ignored', () => {
  for (const [camel, snake] of Object.entries(SLO_NAMES) as [keyof SloTargets, string][]) {
    for (const key of [camel, snake]) {
      it(`analyzeResults reads slo.${key}`, async () => {
        const { metrics } = await analyzeResults(source, { slo: { [key]: MISSED_MS } as SloTargets });
        expect(metrics.goodput?.slo).toEqual({ [camel]: MISSED_MS });
        expect(metrics.goodput?.goodRequests).toBe(0);
      });

      it(`a test's settings read slo.${key}`, () => {
        expect(resolveNodeTestConfig({ slo: { [key]: MISSED_MS } }).slo).toEqual({ [camel]: MISSED_MS });
      });

      it(`a sweep's search reads slo.${key}`, () => {
        expect(parseSweepPlan({ search: { slo: { [key]: MISSED_MS } } }).search?.slo).toEqual({ [camel]: MISSED_MS });
      });
    }
  }

  it('refuses a misspelt objective everywhere, naming it and the accepted names', async () => {
    await expect(analyzeResults(source, { slo: { ttft: 20 } as SloTargets })).rejects.toThrow(/unknown objective "ttft"; use ttftMs \(ttft_ms\), tpotMs \(tpot_ms\), totalMs \(total_ms\)/);
    await expect(analyzeResults(source, { slo: { ttftMS: 20 } as SloTargets })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    expect(() => resolveNodeTestConfig({ slo: { ttftMS: 20 } })).toThrow(/unknown setting "ttftMS"/);
    expect(() => resolveNodeTestConfig({ slo: { ttft_msec: 20 } })).toThrow(/unknown setting "ttft_msec"/);
    expect(() => parseSweepPlan({ search: { slo: { ttft: 20 } } })).toThrow(/search\.slo: unknown objective "ttft"/);
  });

  it('refuses an unknown option or a bad value, and two spellings that disagree', async () => {
    await expect(analyzeResults(source, { SLO: { ttftMs: 20 } } as never)).rejects.toThrow(/unknown option "SLO"; the only option is slo/);
    await expect(analyzeResults(source, { slo: { ttftMs: -1 } })).rejects.toThrow(/ttftMs must be a number of milliseconds above 0/);
    await expect(analyzeResults(source, { slo: { ttftMs: 20, ttft_ms: 30 } as SloTargets })).rejects.toThrow(/ttftMs and ttft_ms are the same objective/);
  });

  it("a sweep's search takes snake_case settings and refuses unknown ones", () => {
    const plan = parseSweepPlan({ search: { slo: { ttft_ms: 200 }, low_rate: 2, high_rate: 50 } });
    expect(plan.search).toMatchObject({ lowRate: 2, highRate: 50 });
    expect(() => parseSweepPlan({ search: { slo: { ttftMs: 200 }, lowrate: 2 } })).toThrow(/unknown setting "lowrate"/);
  });
});

describe('nested settings are read in both spellings or refused', () => {
  it('a failure schedule action takes at_s and refuses a misspelt key', async () => {
    const { resolveRoutingTestConfig } = await import('../../src/config/routing-test-config.js');
    const config = resolveRoutingTestConfig({ failure_schedule: [{ at_s: 5, action: 'crash', nodes: [1] }] });
    expect(config.failureSchedule).toEqual([{ atS: 5, action: 'crash', nodes: [1] }]);
    expect(() => resolveRoutingTestConfig({ failureSchedule: [{ atS: 5, action: 'crash', node: [1] }] })).toThrow(/unknown setting "node"/);
  });
});
