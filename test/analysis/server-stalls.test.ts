import { describe, expect, it } from 'vitest';
import { correctRunClocks } from '../../src/analysis/clock-offset/correct-run-clocks.js';
import { deriveColumnArrays, deriveColumns } from '../../src/analysis/derive.js';
import { summarize } from '../../src/analysis/summarize.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import type { RunData } from '../../src/types/run.js';
import { fullyTracedRecord, runOf, T0 } from './records.js';

const URL = 'http://127.0.0.1:30001';

/**
 * A node test on one server, 40 requests 0.5 s apart (TTFT 50 ms, network 1 ms). The server hangs at 10 s and resumes at
 * 13 s: the requests sent in between wait in its socket and it stamps their receipt on resuming, as SIGSTOP makes it.
 */
function hungRun(): RunData {
  const records = Array.from({ length: 40 }, (_, index) => {
    const offset = index * 0.5;
    const record = fullyTracedRecord(offset);
    if (offset >= 10 && offset < 13) {
      const waitS = 13 - (offset + 0.003);
      for (const field of ['serverCreatedTime', 'queueTimeStart', 'queueTimeEnd', 'serverFirstTokenTime', 'firstTokenTime', 'finishTime'] as const) {
        record[field] = (record[field] as number) + waitS;
      }
    }
    return record;
  });
  const run = runOf(records, { requestRate: 2 });
  run.extras = { cluster: { serverUrls: [URL] } };
  run.events = [
    { time: T0 + 10, kind: 'hang', node: 0 },
    { time: T0 + 13, kind: 'restore', node: 0 },
  ];
  return run;
}

describe('a hung server: the wait for it to resume is its own quantity, not network time (issue 27)', () => {
  it('sets serverStallSeconds on the requests sent while it was stopped and leaves it out of network_time', () => {
    const run = correctRunClocks(hungRun());
    const stalled = run.records.filter((record) => record.serverStallSeconds !== undefined);
    expect(stalled).toHaveLength(6);
    expect(stalled[0]?.serverStallSeconds).toBeCloseTo(3 - 0.003, 6);
    const arrays = deriveColumnArrays(run.records);
    run.records.forEach((record, index) => {
      expect(deriveColumns(record).network_time).toBeCloseTo(0.001, 6);
      expect(arrays.network_time[index]).toBeCloseTo(0.001, 6);
    });
    // The measured records are not changed.
    expect(hungRun().records.some((record) => record.serverStallSeconds !== undefined)).toBe(false);
  });

  it('reports the stalled requests on the hang event, and the terminal names them and the TTFT they cost', () => {
    const run = correctRunClocks(hungRun());
    const summary = summarize(run);
    expect(summary.latencies.network_time?.max).toBeCloseTo(0.001, 6);
    const hang = summary.events?.find((impact) => impact.kind === 'hang');
    expect(hang?.stalls?.requests).toBe(6);
    expect(hang?.stalls?.stallSeconds.max).toBeCloseTo(2.997, 6);
    const line = formatTerminalSummary(run, summary).split('\n').find((text) => text.includes('hang node 0'));
    expect(line).toMatch(/no failures; completed\/s [\d.]+ -> [\d.]+; TTFT p50 49\.00 -> \d{4}\.\d ms; 6 requests waited for the stopped server \(p50 1\.75 s, max 3\.00 s; not counted as network time\)/);
  });

  it('leaves a run without hangs as it is', () => {
    const run = hungRun();
    run.events = [{ time: T0 + 10, kind: 'crash', node: 0 }];
    expect(correctRunClocks(run).records.some((record) => record.serverStallSeconds !== undefined)).toBe(false);
  });
});

describe('an event with no baseline says so where its verdict is printed (issue 27)', () => {
  it('a restore after a crash in the ramp-up is "not judged: no baseline", not "not back to normal"', () => {
    // 40 requests over 19.5 s: the ramp-up ends at 1.95 s; node 0 crashes at 1 s and is restored at 3 s.
    const run = runOf(Array.from({ length: 40 }, (_, index) => fullyTracedRecord(index * 0.5)), { requestRate: 2 });
    run.extras = { cluster: { serverUrls: [URL] } };
    run.events = [
      { time: T0 + 1, kind: 'crash', node: 0 },
      { time: T0 + 3, kind: 'restore', node: 0 },
    ];
    const summary = summarize(run);
    const restore = summary.events?.find((impact) => impact.kind === 'restore');
    expect(restore?.recoverySeconds).toBeNull();
    expect(restore?.recoveryNote).toMatch(/^no baseline: the crash came during the ramp-up/);
    const text = formatTerminalSummary(run, summary);
    expect(text).toMatch(/restore node 0 at 3\.00 s:.*recovery not judged: no baseline: the crash came during the ramp-up/);
    expect(text).not.toContain('not back to normal');
  });

  it('a restore with a baseline is still timed', () => {
    const run = runOf(Array.from({ length: 40 }, (_, index) => fullyTracedRecord(index * 0.5)), { requestRate: 2 });
    run.extras = { cluster: { serverUrls: [URL] } };
    run.events = [
      { time: T0 + 8, kind: 'crash', node: 0 },
      { time: T0 + 9, kind: 'restore', node: 0 },
    ];
    const restore = summarize(run).events?.find((impact) => impact.kind === 'restore');
    expect(restore?.recoveryNote).toBeUndefined();
    expect(restore?.recoverySeconds).toBe(0);
  });
});
