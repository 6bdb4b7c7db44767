import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { assessSentProcess } from '../../src/analysis/sent-process.js';
import { createArrivalSchedule } from '../../src/workload/arrivals/arrival-registry.js';
import { SeededRandom } from '../../src/utils/random.js';
import type { RequestRecord } from '../../src/types/record.js';
import type { RunData } from '../../src/types/run.js';
import { recordAt, runOf } from './records.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';

const RATE = 400;
const COUNT = 2000;

/**
 * A run's records at 400 req/s (the schedule servelab draws by default), each sent at `sentAt(scheduled)` seconds
 * after t0 and received by the server 0.3 ms later.
 */
function recordsSent(sentAt: (scheduledS: number, index: number) => number): RequestRecord[] {
  const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: RATE }, COUNT, new SeededRandom(3));
  return Array.from(offsetsMs, (offsetMs, index) => {
    const scheduledS = offsetMs / 1000;
    const arrivalS = sentAt(scheduledS, index);
    return recordAt({ scheduledTime: scheduledS, arrivalTime: arrivalS, serverCreatedTime: arrivalS + 0.0003, firstTokenTime: arrivalS + 0.02, finishTime: arrivalS + 0.1, actualOutputTokens: 5 });
  });
}

function run(records: RequestRecord[], config: Record<string, unknown> = {}, simulated = false): RunData {
  const data = runOf(records, { requestRate: RATE, simulated });
  return { ...data, config: { ...data.config, ...config } };
}

/** Sends a client whose timer fires every 4 ms would make: each request at the first tick after its due time, a few µs apart. */
function clumpedSend(scheduledS: number, index: number): number {
  return Math.ceil(scheduledS / 0.004) * 0.004 + (index % 7) * 0.000002;
}

/** A client on its own core: each request 0.2-0.3 ms after its due time. */
function cleanSend(scheduledS: number, index: number): number {
  return scheduledS + 0.0002 + ((index * 37) % 100) * 0.000001;
}

describe('the sent process against the scheduled one', () => {
  it('a clumped send fails the KS test its schedule passes, and the summary says so in a caution', () => {
    const summary = summarize(run(recordsSent(clumpedSend)));
    const report = summary.dataQuality.sentProcess;
    expect(report?.law).toBe('exponential, rate 400 /s');
    const bySource = Object.fromEntries((report?.tests ?? []).map((test) => [test.source, test]));
    expect(bySource['scheduled']?.passed).toBe(true);
    expect(bySource['scheduled']?.gaps).toBe(COUNT - 1);
    expect(bySource['sent']?.passed).toBe(false);
    expect(bySource['sent']?.pValue).toBeLessThan(1e-6);
    expect(bySource['server']?.passed).toBe(false);
    expect(report?.departs).toBe(true);
    // Within a 4 ms tick every request after the first leaves with the one before: a large share of the pairs.
    expect(report?.clumps.share).toBeGreaterThan(0.3);
    expect(report?.sendLagMs?.p99).toBeGreaterThan(3);
    const caution = summary.dataQuality.cautions?.find((line) => line.includes('the load as sent'));
    expect(caution).toMatch(/fail the KS test against the exponential, rate 400 \/s \(D 0\.\d+, p [<\d.e -]+\) that the schedule's pass/);
    expect(caution).toContain('server-side D');
  });

  it('a clean send passes with its schedule: no caution', () => {
    const summary = summarize(run(recordsSent(cleanSend)));
    const report = summary.dataQuality.sentProcess;
    expect(report?.tests.map((test) => [test.source, test.passed])).toEqual([
      ['scheduled', true],
      ['sent', true],
      ['server', true],
    ]);
    expect(report?.departs).toBe(false);
    expect(report?.clumps.clumped).toBe(0);
    expect(report?.sendLagMs?.p99).toBeCloseTo(0.299, 2);
    expect(summary.dataQuality.cautions ?? []).toEqual([]);
  });

  it('the terminal says it only when the sent process departs; report.html shows the tests either way', () => {
    const clumped = run(recordsSent(clumpedSend));
    const clumpedSummary = summarize(clumped);
    expect(formatTerminalSummary(clumped, clumpedSummary)).toMatch(/Caution: the load as sent is not the arrival process asked for/);
    const clumpedHtml = buildReportHtml(clumped, clumpedSummary, []);
    expect(clumpedHtml).toContain('<h2>Sent process: departs from the schedule</h2>');
    expect(clumpedHtml).toMatch(/<td>sent<\/td><td>1999<\/td><td>0\.\d{4}<\/td><td>&lt; 1e-300<\/td><td>fails<\/td>/);
    const clean = run(recordsSent(cleanSend));
    const cleanSummary = summarize(clean);
    expect(formatTerminalSummary(clean, cleanSummary)).not.toMatch(/load as sent/);
    const cleanHtml = buildReportHtml(clean, cleanSummary, []);
    expect(cleanHtml).toContain('<h2>Sent process</h2>');
    expect(cleanHtml).toMatch(/<td>sent<\/td><td>1999<\/td><td>0\.\d{4}<\/td><td>[\d.]+<\/td><td>passes<\/td>/);
  });

  it('gamma arrivals are tested against the gamma law of their burstiness', () => {
    const offsetsMs = createArrivalSchedule({ process: 'gamma', requestRate: RATE, burstiness: 0.5 }, COUNT, new SeededRandom(5));
    const records = Array.from(offsetsMs, (offsetMs) => recordAt({ scheduledTime: offsetMs / 1000, arrivalTime: offsetMs / 1000 + 0.0002 }));
    const asGamma = assessSentProcess(run(records, { arrival: "gamma", burstiness: 0.5 }), records);
    expect(asGamma?.law).toBe('gamma, shape 0.5, rate 400 /s');
    expect(asGamma?.tests.find((test) => test.source === 'scheduled')?.passed).toBe(true);
    // The same gaps read as Poisson fail: the test tells the laws apart.
    const asPoisson = assessSentProcess(run(records), records);
    expect(asPoisson?.tests.find((test) => test.source === 'scheduled')?.passed).toBe(false);
  });

  it('trace replay is not tested, with the reason; virtual time and closed loops have no section', () => {
    const records = recordsSent(cleanSend);
    const trace = assessSentProcess(run(records, { arrival: 'trace' }), records);
    expect(trace?.tests).toEqual([]);
    expect(trace?.skippedReason).toMatch(/trace replay/);
    expect(trace?.sendLagMs).not.toBeNull();
    expect(assessSentProcess(run(records, {}, true), records)).toBeUndefined();
    expect(assessSentProcess(run(records, { concurrency: 8 }), records)).toBeUndefined();
  });
});
