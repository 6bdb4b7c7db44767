import type { RunData } from '../../src/types/run.js';
import { T0, fullyTracedRecord, recordAt, runOf } from '../analysis/records.js';

/** A small routing run over three nodes with a crash of node 1 at 3 s: its later requests fail. */
export function sampleRoutingRun(requests = 120): RunData {
  const hosts = ['http://127.0.0.1:30001', 'http://127.0.0.1:30002', 'http://127.0.0.1:30003'];
  const records = Array.from({ length: requests }, (_, index) => {
    const offset = index * 0.05;
    const host = hosts[index % hosts.length] as string;
    if (host === hosts[1] && offset > 3) {
      return recordAt({ scheduledTime: offset, arrivalTime: offset + 0.0002, routerSendTime: offset + 0.0005, host, success: false, error: 'http_5xx', httpStatus: 500, finishTime: offset + 0.01 });
    }
    // Latency grows with load so that percentiles differ.
    return fullyTracedRecord(offset, { host, prefixGroup: index % 4, actualOutputTokens: 11 + (index % 7), finishTime: offset + 0.25 + (index % 10) * 0.02 });
  });
  const run = runOf(records, { testLevel: 'routing', requestRate: 20, runId: 'sample-routing' });
  run.events.push({ time: T0 + 3, kind: 'crash', node: 1 }, { time: T0 + 5, kind: 'restore', node: 1 });
  // Node i is hosts[i], as a launched cluster lists them: events name nodes by this index.
  run.extras = { cluster: { serverUrls: hosts, routerUrl: 'http://127.0.0.1:30000' } };
  return run;
}
