import { describe, expect, it } from 'vitest';
import { KvTransferLink } from '../../../src/engine/disaggregation/kv-transfer-link.js';
import { PrefillRole } from '../../../src/engine/disaggregation/prefill-role.js';
import type { EngineRequestView } from '../../../src/types/engine.js';

/** The engine's view of a finished prefill of `promptLength` tokens (only what PrefillRole reads). */
function finished(id: string, promptLength: number, prefillFinishedMs: number): EngineRequestView {
  return { id, serial: 0, promptTokenIds: [], promptLength, maxNewTokens: 1, outputTokens: 1, cachedTokens: 0, numRetractions: 0, receivedMs: 0, queueEntryMs: 0, forwardEntryMs: prefillFinishedMs - 1, prefillFinishedMs, finishedMs: prefillFinishedMs, finishReason: { type: 'length', length: 1 }, outputTokenId: () => 0, driverData: undefined } as EngineRequestView;
}

describe('PrefillRole driven in real time', () => {
  it("starts a transfer whose engine step ended before the link's last event at that event, instead of crashing the server", () => {
    // 1 byte per ms, no latency: a 10-token prompt at 1 byte a token takes 10 ms alone.
    const link = new KvTransferLink({ bandwidthBytesPerSecond: 1000, latencyMs: 0 });
    const delivered: [string, number][] = [];
    const role = new PrefillRole<string>(link, 1, { submit: () => undefined, scheduleLinkEvent: () => undefined, deliver: (_, room, _arrival, nowMs) => delivered.push([room, nowMs]) });
    for (const room of ['a', 'b', 'c']) {
      role.arrive(room, { id: `request-${room}`, promptTokenIds: [], maxNewTokens: 1 }, 0);
      role.decodeReady(room, 'decode', 0);
    }
    expect(role.onEngineFinish(finished('request-a', 10, 100), 100, () => undefined)).toBe(true);
    expect(role.onEngineFinish(finished('request-c', 100, 100), 100, () => undefined)).toBe(true);
    // Sharing the link, a's 10 bytes are over at 120; c's 100 are still moving. The late driver then completes b's
    // step, modelled to end at 105: b starts at 120, beside c's remaining 90 bytes.
    role.onLinkTime(120);
    expect(delivered).toEqual([['a', 120]]);
    expect(() => role.onEngineFinish(finished('request-b', 10, 105), 105, () => undefined)).not.toThrow();
    role.onLinkTime(140);
    expect(delivered).toEqual([['a', 120], ['b', 140]]);
  });
});

describe("a prefill server's wait for its decode server", () => {
  it('is bounded: past the bootstrap timeout from its arrival a request with no destination fails with a clear error', () => {
    const link = new KvTransferLink({ bandwidthBytesPerSecond: 1000, latencyMs: 0 });
    const submitted: string[] = [];
    const role = new PrefillRole<string>(link, 1, { submit: (input) => submitted.push(input.id), scheduleLinkEvent: () => undefined, deliver: () => undefined });
    role.arrive('lonely', { id: 'rid-lonely', promptTokenIds: [1, 2], maxNewTokens: 1 }, 10);
    expect(role.bootstrapQueueLength).toBe(1);
    // Not due yet (an injected 50 ms; SGLang's default is 300 s): nothing happens.
    expect(role.expireBootstrap('lonely', 59, 50)).toBeUndefined();
    const failed = role.expireBootstrap('lonely', 60, 50);
    expect(failed?.requestId).toBe('rid-lonely');
    expect(failed?.message).toContain('Prefill bootstrap failed for request rid=rid-lonely bootstrap_room=lonely');
    expect(failed?.message).toContain('Request lonely timed out after 0.1s in KVPoll.Bootstrapping');
    expect(role.bootstrapQueueLength).toBe(0);
    // A destination that comes after the request failed does not submit it.
    role.decodeReady('lonely', 'decode', 70);
    expect(submitted).toEqual([]);
  });

  it('does not fail a request whose decode server said where to send its KV in time', () => {
    const link = new KvTransferLink({ bandwidthBytesPerSecond: 1000, latencyMs: 0 });
    const submitted: string[] = [];
    const role = new PrefillRole<string>(link, 1, { submit: (input) => submitted.push(input.id), scheduleLinkEvent: () => undefined, deliver: () => undefined });
    role.arrive('paired', { id: 'rid-paired', promptTokenIds: [1, 2], maxNewTokens: 1 }, 0);
    role.decodeReady('paired', 'decode', 49);
    expect(submitted).toEqual(['rid-paired']);
    expect(role.expireBootstrap('paired', 50, 50)).toBeUndefined();
  });
});
