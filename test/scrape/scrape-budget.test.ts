import { describe, expect, it } from 'vitest';
import { resolveNodeTestConfig } from '../../src/config/node-test-config.js';
import { DEFAULT_SCRAPE_BUDGET, ScrapeBudget, scrapeBudgetForRate, type ScrapeBudgetLimits } from '../../src/scrape/scrape-budget.js';

const LIMITS: ScrapeBudgetLimits = { baseIntervalMs: 500, bytesPerHour: 3.6e6, burstBytes: 10_000, capBytes: 1e12, bytesPerHourAfterCap: 0.36e6 };

/** Rounds of `roundBytes` each, from `fromMs` for `durationMs`, paced by the budget; returns the bytes and the end. */
function scrape(budget: ScrapeBudget, fromMs: number, durationMs: number, roundBytes: number): { bytes: number; endMs: number } {
  let nowMs = fromMs;
  let bytes = 0;
  while (nowMs < fromMs + durationMs) {
    const waitMs = budget.nextIntervalMs(nowMs);
    budget.record(roundBytes);
    bytes += roundBytes;
    nowMs += waitMs;
  }
  return { bytes, endMs: nowMs };
}

describe('scrape budget', () => {
  it('keeps the base interval while the rows are small', () => {
    const budget = new ScrapeBudget(LIMITS);
    // A rate of 1000 bytes a second: 400-byte rounds every 500 ms are 800 bytes a second, under it.
    for (let nowMs = 0; nowMs < 600_000; nowMs += 500) {
      expect(budget.nextIntervalMs(nowMs)).toBe(500);
      budget.record(400);
    }
  });

  it('after a quiet hour lets only the burst ahead, not the hour\'s unused rate', () => {
    const budget = new ScrapeBudget(LIMITS);
    // An idle hour: tiny rounds.
    const idle = scrape(budget, 0, 3_600_000, 10);
    // Then heavy rounds (5 KB every 500 ms: 10 KB a second against a rate of 1 KB a second) for a minute.
    const heavy = scrape(budget, idle.endMs, 60_000, 5_000);
    const allowedBytes = LIMITS.burstBytes + (LIMITS.bytesPerHour / 3_600_000) * (heavy.endMs - idle.endMs);
    expect(heavy.bytes).toBeLessThanOrEqual(allowedBytes + 5_000);
    expect(heavy.bytes).toBeGreaterThan(allowedBytes - 5_000);
  });

  it('past the cap, says so once, paces at the lower rate and lets a tenth of the burst ahead', () => {
    const messages: string[] = [];
    const budget = new ScrapeBudget({ ...LIMITS, capBytes: 50_000 }, (message) => messages.push(message));
    const before = scrape(budget, 0, 60_000, 5_000);
    expect(budget.capReached).toBe(true);
    const rateAfterPerMs = LIMITS.bytesPerHourAfterCap / 3_600_000;
    const after = scrape(budget, before.endMs, 3_600_000, 5_000);
    expect(after.bytes).toBeLessThanOrEqual(LIMITS.burstBytes / 10 + rateAfterPerMs * (after.endMs - before.endMs) + 5_000);
    expect(after.bytes).toBeGreaterThan(rateAfterPerMs * (after.endMs - before.endMs) - 5_000);
    // A quiet hour, then heavy rounds again: a tenth of the burst ahead, no more.
    const idle = scrape(budget, after.endMs, 3_600_000, 1);
    const heavy = scrape(budget, idle.endMs, 600_000, 2_000);
    expect(heavy.bytes).toBeLessThanOrEqual(LIMITS.burstBytes / 10 + rateAfterPerMs * (heavy.endMs - idle.endMs) + 2_000);
    expect(messages).toHaveLength(1);
  });
});

describe('--server-metrics-mb-per-hour', () => {
  it("is the default budget at its default, and scales the rate, what may go ahead of it and the rate past the cap", () => {
    expect(scrapeBudgetForRate(resolveNodeTestConfig({}).serverMetricsMbPerHour)).toEqual(DEFAULT_SCRAPE_BUDGET);
    expect(scrapeBudgetForRate(1_000)).toEqual({ ...DEFAULT_SCRAPE_BUDGET, bytesPerHour: 1e9, burstBytes: 1e8, bytesPerHourAfterCap: 1e8 });
    // A small budget paces a short run too: its allowance ahead is a tenth of the hour's, not the default's 10 MB.
    expect(scrapeBudgetForRate(5).burstBytes).toBe(5e5);
  });

  it('refuses a budget that is not positive, naming the setting', () => {
    expect(() => resolveNodeTestConfig({ serverMetricsMbPerHour: 0 })).toThrow(/serverMetricsMbPerHour/);
  });
});
