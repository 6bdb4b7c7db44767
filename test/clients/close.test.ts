import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import { CLOSE_GRACE_MS } from '../../src/clients/common/http-transport.js';
import { requestFor } from './conformance.js';
import { sleep, sseEvent, startScriptedServer } from './helpers/scripted-server.js';
import { sglangWire } from './helpers/wires.js';
import { driveFakeTime, fakeTimeClock, useFakeTime, useRealTime } from '../helpers/fake-time.js';

afterEach(useRealTime);

describe('closing a client', () => {
  // On fake time (test/helpers/fake-time.ts): the server's pauses and the client's grace period are fake timers, the
  // sockets real, so the grace period is measured exactly.
  it('lets requests in flight finish, and cuts the ones that outlast the grace period, at its end', async () => {
    useFakeTime();
    const fakeClock = fakeTimeClock();
    const server = await startScriptedServer((request) =>
      request.body?.['rid'] === 'quick'
        ? { steps: [{ delayMs: 100 }, { write: sseEvent(sglangWire.tokenEvent(1, { finish: 'length' })) }, { write: sseEvent('[DONE]') }, { end: true }] }
        : { steps: [{ write: sseEvent(sglangWire.tokenEvent(1)) }, { delayMs: 10_000 }, { end: true }] },
    );
    try {
      const client = createProtocolClient('sglang', {
        baseUrl: server.url,
        stream: true,
        sampling: { temperature: 0, ignoreEos: true },
        clock: systemClock,
      });
      const quick = client.send(requestFor('quick'));
      const stuck = client.send(requestFor('stuck'));
      await driveFakeTime(sleep(20));
      const startedMs = fakeClock.nowMs();
      await driveFakeTime(client.close());
      const closedAfterMs = fakeClock.nowMs() - startedMs;
      expect((await quick).success).toBe(true);
      const stuckOutcome = await stuck;
      expect(stuckOutcome.success).toBe(false);
      expect(stuckOutcome.error).toBe('network_error');
      expect(stuckOutcome.firstTokenTime).toBeDefined();
      expect(closedAfterMs).toBe(CLOSE_GRACE_MS);
    } finally {
      await server.close();
    }
  });
});
