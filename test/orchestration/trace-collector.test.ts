import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { joinTapRecords } from '../../src/orchestration/join-tap-records.js';
import { collectTraceDuringRun } from '../../src/orchestration/trace-collector.js';
import { TAP_RECORDS_PATH } from '../../src/routing/tap/start-taps.js';
import type { TapRecord } from '../../src/types/routing.js';
import { fullyTracedRecord } from '../analysis/records.js';

const tapRecord = (index: number): TapRecord => ({ requestId: `r-${index}`, routerSendTime: 1_700_000_000 + index, host: `http://127.0.0.1:3000${index % 2}`, hostIndex: index % 2 });

describe('the routing trace, fetched while the run goes on', () => {
  it('keeps host and router_send_time of the requests traced before the tracer died', async () => {
    // A tracer that holds 3 records, then 5, then dies (its port closes) before the run ends.
    const held: TapRecord[] = [0, 1, 2].map(tapRecord);
    let pagesServed = 0;
    const sockets = new Set<Socket>();
    const tracer: Server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (url.pathname !== TAP_RECORDS_PATH) return void response.writeHead(404).end();
      const offset = Number(url.searchParams.get('offset') ?? 0);
      pagesServed++;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ records: held.slice(offset), total: held.length }));
      if (pagesServed === 2) held.push(tapRecord(3), tapRecord(4));
    });
    tracer.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => tracer.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(tracer.address() as AddressInfo).port}`;
    const trace = collectTraceDuringRun(url, 10);
    for (let waited = 0; pagesServed < 4 && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => tracer.close(() => resolve()));

    const collected = await trace.finish();
    expect(collected.records.map((record) => record.requestId)).toEqual(['r-0', 'r-1', 'r-2', 'r-3', 'r-4']);
    expect(collected.failure).toMatch(/could not fetch tap records/);
    const records = [0, 1, 2, 3, 4, 5].map((index) => fullyTracedRecord(index, { requestId: `r-${index}`, host: undefined, routerSendTime: undefined }));
    expect(joinTapRecords(records, collected.records).matched).toBe(5);
    expect(records[4]).toMatchObject({ host: 'http://127.0.0.1:30000', routerSendTime: 1_700_000_004 });
    expect(records[5]?.host).toBeUndefined();
  });
});
