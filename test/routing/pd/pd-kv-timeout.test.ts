import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createProtocolClient } from '../../../src/clients/registry.js';
import { systemClock } from '../../../src/clock/clock.js';
import { PD_KV_DESTINATION_PATH } from '../../../src/engine/http/pd-http.js';
import { startSimServer } from '../../../src/engine/http/start-sim-server.js';
import { createRoundRobinPolicy } from '../../../src/routing/policies/round-robin/round-robin-policy.js';
import { startRouter } from '../../../src/routing/router/start-router.js';

const opened: { close(): Promise<void> }[] = [];
const standIns: Server[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((item) => item.close().catch(() => undefined)));
  for (const server of standIns.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/**
 * A prefill server that hung after the handshake (as a SIGSTOPped one would, its sockets open): healthy at the
 * router's check, it takes the decode server's room registration, then never answers its prefill leg and never sends
 * the KV.
 */
async function hungPrefillServer(): Promise<{ url: string; port: number }> {
  const server = createServer((incoming, response) => {
    incoming.resume();
    incoming.on('end', () => {
      if (incoming.url === PD_KV_DESTINATION_PATH || incoming.method === 'GET') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{}');
      }
      // The prefill leg: nothing, ever.
    });
  });
  standIns.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port };
}

describe('a PD request whose prefill server never delivers its KV', () => {
  it("ends as a failed record with the decode server's timeout error after its bounded wait (injected: 300 ms), not a hang", async () => {
    const prefill = await hungPrefillServer();
    // SGLang's decode server waits 300 s by default (SGLANG_DISAGGREGATION_WAITING_TIMEOUT); this one 300 ms.
    const decode = await startSimServer({ profile: { kind: 'simple', stepMs: 1 }, role: 'decode', pd: { kvWaitingTimeoutMs: 300 } });
    opened.push(decode);
    const router = await startRouter({
      workerUrls: [],
      policy: createRoundRobinPolicy({}),
      pd: { prefill: [{ url: prefill.url, bootstrapPort: prefill.port }], decode: [decode.url], prefillPolicy: createRoundRobinPolicy({}), decodePolicy: createRoundRobinPolicy({}) },
      maxRetries: 0,
      traceClock: systemClock,
      healthCheckIntervalMs: 60_000,
    });
    opened.push(router);
    await router.checkHealthNow();
    // No client deadline: only the decode server's timeout can end the request. Not streamed: a streamed answer's
    // 200 would wait at the router for the hung prefill leg's status (smg's join of both sends), which never comes.
    const client = createProtocolClient('sglang', { baseUrl: router.url, stream: false, sampling: { temperature: 0, ignoreEos: true }, clock: systemClock });
    try {
      const outcome = await client.send({ requestId: 'kv-never-comes', workload: { datasetIndex: 0, prompt: 'one two three', inputLength: 3, outputLength: 4 } });
      expect(outcome.success).toBe(false);
      expect(outcome.error).toBe('http_5xx');
      expect(outcome.errorMessage).toMatch(/Decode transfer failed for request rid=kv-never-comes .*timed out after [\d.]+s in KVPoll\.WaitingForInput/);
    } finally {
      await client.close();
    }
  });
});
