import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import type { RequestRecord } from '../../src/types/record.js';
import { fullyTracedRecord, recordAt, runOf, T0 } from './records.js';

/** 2P2D: nodes 0 and 1 prefill, 2 and 3 decode. */
const URLS = ['http://127.0.0.1:31001', 'http://127.0.0.1:31002', 'http://127.0.0.1:31003', 'http://127.0.0.1:31004'];

/**
 * One PD request every 20 ms for 40 s, pairs in turn (prefill i % 2, decode 2 + (i >> 1) % 2). Prefill node 1 crashes
 * at 20 s: its next 10 requests fail (their record's `host` is the decode server, as a PD record's always is), then it
 * is restored at 30 s.
 */
function prefillCrash(): RequestRecord[] {
  const records: RequestRecord[] = [];
  let failed = 0;
  for (let index = 0; index < 2000; index++) {
    const offset = index * 0.02;
    const prefillHost = URLS[index % 2] as string;
    const decodeHost = URLS[2 + ((index >> 1) % 2)] as string;
    const pd = { host: decodeHost, prefillHost, decodeHost };
    if (prefillHost === URLS[1] && offset >= 20 && failed < 10) {
      failed++;
      records.push(recordAt({ scheduledTime: offset, arrivalTime: offset, routerSendTime: offset, ...pd, success: false, error: 'http_5xx', finishTime: offset + 0.002 }));
      continue;
    }
    records.push(fullyTracedRecord(offset, { ...pd, firstTokenTime: offset + 0.05 }));
  }
  return records;
}

describe('failure analysis of a PD cluster', () => {
  it("counts a prefill server's failures on the requests it prefilled, and the events keep the node's role", () => {
    const run = runOf(prefillCrash(), { testLevel: 'routing', requestRate: 50 });
    run.extras = { cluster: { serverUrls: URLS } };
    run.events.push({ time: T0 + 20, kind: 'crash', node: 1, role: 'prefill' }, { time: T0 + 30, kind: 'restore', node: 1, role: 'prefill' });
    const events = summarize(run).events ?? [];
    const crash = events.find((event) => event.kind === 'crash');
    const restore = events.find((event) => event.kind === 'restore');
    // Before: no record named the prefill server as its host, so the node had no requests and no failures.
    expect(crash).toMatchObject({ node: 1, role: 'prefill', attribution: 'node', nodeUrl: URLS[1], failuresUntilNextEvent: 10, unattributedFailures: 0 });
    expect(crash?.before.completionsPerSecond).toBeCloseTo(25, 0);
    expect(restore?.role).toBe('prefill');
    expect(restore?.recoverySeconds).toBe(0);
    expect(restore?.recoveryNote).toBeUndefined();
  });
});
