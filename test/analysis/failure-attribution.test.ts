import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { nodesCsvRow, NODES_CSV_COLUMNS } from '../../src/report/nodes/nodes-reporter.js';
import type { RequestRecord } from '../../src/types/record.js';
import { fullyTracedRecord, recordAt, runOf, T0 } from './records.js';

const URLS = ['http://127.0.0.1:30001', 'http://127.0.0.1:30002', 'http://127.0.0.1:30003', 'http://127.0.0.1:30004'];

/**
 * Four nodes, one request every 20 ms round-robin for 40 s (80 ms between one node's requests). Nodes 1 and 2
 * crash at 20 s, stamped 3 ms apart as the failure executor stamps one schedule entry node by node; node 1's next 15
 * requests fail, node 2's next 12; both are restored at 30 s. The ramp-up (first 4 s) is slow: TTFT 500 ms there,
 * 49 ms afterwards, so a baseline that reached into it would be wrong.
 */
function twoCrashesAtOnce(): { records: RequestRecord[]; failuresOf: number[] } {
  const records: RequestRecord[] = [];
  const failuresOf = [0, 0, 0, 0];
  for (let index = 0; index < 2000; index++) {
    const offset = index * 0.02;
    const node = index % 4;
    const host = URLS[node] as string;
    const crashed = (node === 1 && offset >= 20 && failuresOf[1]! < 15) || (node === 2 && offset >= 20 && failuresOf[2]! < 12);
    if (crashed) {
      failuresOf[node]!++;
      records.push(recordAt({ scheduledTime: offset, arrivalTime: offset, routerSendTime: offset, host, success: false, error: 'connect_refused', finishTime: offset + 0.002 }));
      continue;
    }
    const slowRampUp = offset < 4 ? 0.45 : 0;
    records.push(fullyTracedRecord(offset, { host, firstTokenTime: offset + 0.05 + slowRampUp }));
  }
  return { records, failuresOf };
}

describe('failure analysis per node (issue 11)', () => {
  it('attributes the failures of two nodes crashed at the same instant each to its own node', () => {
    const { records } = twoCrashesAtOnce();
    const run = runOf(records, { testLevel: 'routing', requestRate: 50 });
    run.extras = { cluster: { serverUrls: URLS } };
    run.events.push(
      { time: T0 + 20, kind: 'crash', node: 1 },
      { time: T0 + 20.003, kind: 'crash', node: 2 },
      { time: T0 + 30, kind: 'restore', node: 1 },
      { time: T0 + 30.002, kind: 'restore', node: 2 },
    );
    const events = summarize(run).events ?? [];
    const crash1 = events.find((event) => event.kind === 'crash' && event.node === 1);
    const crash2 = events.find((event) => event.kind === 'crash' && event.node === 2);
    // The old analysis gave node 1 none (its window ended 3 ms later at node 2's event) and node 2 all 27.
    expect(crash1?.failuresUntilNextEvent).toBe(15);
    expect(crash2?.failuresUntilNextEvent).toBe(12);
    expect(crash1?.attribution).toBe('node');
    expect(crash1?.nodeUrl).toBe(URLS[1]);
    expect(crash1?.unattributedFailures).toBe(0);
    // Simultaneous events do not cut each other's baselines, and no baseline reaches into the ramp-up: the 10 s
    // before the crash, on the node's own requests, all at TTFT 49 ms.
    expect(crash2?.before.from).toBeCloseTo(T0 + 10.003, 6);
    expect(crash1?.before.ttftP50).toBeCloseTo(0.049, 6);
    // Recovery per node, with its rule: both nodes answer normally from their restore on.
    const restore1 = events.find((event) => event.kind === 'restore' && event.node === 1);
    const restore2 = events.find((event) => event.kind === 'restore' && event.node === 2);
    expect(restore1?.recoverySeconds).toBe(0);
    expect(restore2?.recoverySeconds).toBe(0);
    expect(restore1?.recoveryRule).toContain("restored node's own requests");
  });

  it('measures an early crash against the steady window, never against the ramp-up', () => {
    const { records } = twoCrashesAtOnce();
    const run = runOf(records, { testLevel: 'routing', requestRate: 50 });
    run.extras = { cluster: { serverUrls: URLS } };
    // A crash at 6 s: the steady window starts at 3.999 s (first arrival 0.001 s + 10% of the 39.98 s arrival period).
    run.events.push({ time: T0 + 6, kind: 'crash', node: 3 });
    const [crash] = summarize(run).events ?? [];
    expect(crash?.before.from).toBeCloseTo(T0 + 3.999, 6);
    expect(crash?.before.ttftP50).toBeCloseTo(0.049, 6); // not the ramp-up's 499 ms
  });

  it('says when there is no steady baseline at all', () => {
    const { records } = twoCrashesAtOnce();
    const run = runOf(records, { testLevel: 'routing', requestRate: 50 });
    run.extras = { cluster: { serverUrls: URLS } };
    run.events.push({ time: T0 + 2, kind: 'crash', node: 3 });
    const [crash] = summarize(run).events ?? [];
    expect(crash?.baselineNote).toContain('no baseline');
  });

  it('falls back to the whole run, and says so, when the run does not list which URL is which node', () => {
    const { records } = twoCrashesAtOnce();
    const run = runOf(records, { testLevel: 'routing', requestRate: 50 });
    run.events.push({ time: T0 + 20, kind: 'crash', node: 1 });
    const [crash] = summarize(run).events ?? [];
    expect(crash?.attribution).toBe('cluster');
    expect(crash?.failuresUntilNextEvent).toBe(27);
  });

  it('puts the node index of --failure-schedule beside each URL in the node summary and nodes.csv', () => {
    const { records } = twoCrashesAtOnce();
    const run = runOf(records, { testLevel: 'routing', requestRate: 50 });
    run.extras = { cluster: { serverUrls: [...URLS].reverse() } }; // index order need not be URL order
    const nodes = summarize(run).routing?.nodes ?? [];
    expect(nodes.map((node) => [node.node, node.host])).toEqual([
      [3, URLS[0]],
      [2, URLS[1]],
      [1, URLS[2]],
      [0, URLS[3]],
    ]);
    expect(NODES_CSV_COLUMNS.slice(0, 2)).toEqual(['node', 'host']);
    expect(nodesCsvRow(nodes[0]!).startsWith(`3,${URLS[0]},`)).toBe(true);
  });
});
