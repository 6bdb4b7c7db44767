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
