import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import { runLoad } from '../../src/load/run-load.js';
import type { Server } from 'node:http';
import type { WorkloadRequest } from '../../src/types/workload.js';
import { warmupNotices } from '../../src/orchestration/warmup-notices.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

const request = (index: number): WorkloadRequest => ({ datasetIndex: index, prompt: 'p', inputLength: 1, outputLength: 2 });

describe('a warmup request that hangs (issue 11)', () => {
  it('is cancelled at the warmup deadline, recorded as total_timeout and reported; the measured load still runs', async () => {
    // A hostile server: warmup requests get headers and then nothing, ever; measured requests a normal answer.
    const server = createServer((incoming, response) => {
      incoming.resume();
      incoming.on('end', () => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        if (String(incoming.headers['x-request-id']).includes('warmup')) {
          response.flushHeaders();
          return;
        }
        response.end(`data: ${JSON.stringify({ text: 'a', meta_info: { completion_tokens: 1, finish_reason: { type: 'length' } } })}\n\ndata: [DONE]\n\n`);
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // No client deadlines at all: only the warmup deadline can end the hung request.
    const client = createProtocolClient('sglang', {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      stream: true,
      sampling: { temperature: 0, ignoreEos: true },
      clock: systemClock,
    });
    try {
      const result = await runLoad({
        requests: [request(0), request(1)],
        warmupRequests: [request(100)],
        warmupTimeoutMs: 50,
        arrivalOffsetsMs: new Float64Array(2),
        client,
        clock: systemClock,
        requestIdPrefix: 'w-',
      });
      expect(result.warmupRecords).toHaveLength(1);
      expect(result.warmupRecords[0]?.error).toBe('total_timeout');
      expect(result.warmupRecords[0]?.errorMessage).toContain('warmup timeout of 50 ms');
      expect(result.records.map((record) => record.success)).toEqual([true, true]);
      const notices = warmupNotices(result.warmupRecords);
      expect(notices).toHaveLength(1);
      expect(notices[0]).toContain('1 of 1 warmup requests failed (first: total_timeout');
    } finally {
      await client.close();
    }
  });
});
