import { describe, expect, it } from 'vitest';
import { DecodeRole } from '../../../src/engine/disaggregation/decode-role.js';
import type { DecodeRoleEngine } from '../../../src/engine/disaggregation/decode-role.js';
import { DEFAULT_BOOTSTRAP_TIMEOUT_MS, DEFAULT_KV_WAITING_TIMEOUT_MS } from '../../../src/engine/disaggregation/pd-timeouts.js';
import { resolvePdSettings } from '../../../src/engine/disaggregation/pd-settings.js';
import { loadProfile } from '../../../src/engine/profile/load-profile.js';
import type { EngineRequestInput } from '../../../src/types/engine.js';

/** A decode engine's KV as the role sees it: free slots, reserved by preallocation and given back on failure. */
function kvLedger(freeTokens: number): DecodeRoleEngine & { reserved: number } {
  return {
    reserved: 0,
    get availableKvTokens() {
      return freeTokens - this.reserved;
    },
    runningAndWaitingRequests: 0,
    reserveKv(tokens: number) {
      this.reserved += tokens;
    },
    cancelKvReservation(tokens: number) {
      this.reserved -= tokens;
    },
  };
}

const INPUT: EngineRequestInput = { id: 'rid-1', promptTokenIds: [1, 2, 3, 4], maxNewTokens: 8 };
const ARRIVAL = { prefillQueueMs: 1, prefillForwardMs: 2, kvTransferMs: 3, cachedTokens: 0 };

/** A role with a 50 ms waiting timeout (injected: SGLang's is 300 s), recording what it asked its driver for. */
function decodeRole(engine: DecodeRoleEngine) {
  const registered: { room: string; nowMs: number; timeoutAtMs: number }[] = [];
  const submitted: string[] = [];
  const role = new DecodeRole<string>(engine, 0, { register: (_source, room, nowMs, timeoutAtMs) => registered.push({ room, nowMs, timeoutAtMs }), submit: (input) => submitted.push(input.id) }, 50);
  return { role, registered, submitted };
}

describe("a decode server's wait for a request's KV", () => {
  it('is bounded: past the waiting timeout from its preallocation the request fails with a clear error and its KV is given back', () => {
    const engine = kvLedger(1000);
    const { role, registered } = decodeRole(engine);
    role.arrive('room-7', INPUT, 'prefill-0', 10);
    expect(registered).toEqual([{ room: 'room-7', nowMs: 10, timeoutAtMs: 60 }]);
    expect(engine.reserved).toBe(4);
    // Not due yet: nothing happens.
    expect(role.expire('room-7', 59.9)).toBeUndefined();
    expect(role.transferQueueLength).toBe(1);
    const failed = role.expire('room-7', 60);
    expect(failed?.requestId).toBe('rid-1');
    expect(failed?.message).toContain('Decode transfer failed for request rid=rid-1 bootstrap_room=room-7');
    expect(failed?.message).toContain('Request room-7 timed out after 0.1s in KVPoll.WaitingForInput');
    expect(failed?.message).toContain('--disaggregation-waiting-timeout');
    expect(role.transferQueueLength).toBe(0);
    expect(engine.reserved).toBe(0);
    // A KV that comes after the request failed finds nobody waiting, and is not submitted.
    expect(role.kvArrived('room-7', ARRIVAL, 70)).toBe(false);
  });

  it('fails at the very instant it was told to call, whatever float rounding does to the difference', () => {
    // (16363.180031939972 + 50) - 16363.180031939972 is 49.99999999999818: measured as a difference, the wait at the
    // due instant is a rounding short of the timeout, and a driver that calls only then would never see it fail.
    const start = 16363.180031939972;
    expect(start + 50 - start).toBeLessThan(50);
    const { role, registered } = decodeRole(kvLedger(1000));
    role.arrive('room-9', INPUT, 'prefill-0', start);
    const due = registered[0]?.timeoutAtMs as number;
    expect(role.expire('room-9', due)?.requestId).toBe('rid-1');
  });

  it('does not fail a request whose KV arrived in time', () => {
    const engine = kvLedger(1000);
    const { role, submitted } = decodeRole(engine);
    role.arrive('room-8', INPUT, 'prefill-0', 0);
    expect(role.kvArrived('room-8', ARRIVAL, 49)).toBe(true);
    expect(submitted).toEqual(['rid-1']);
    expect(role.expire('room-8', 50)).toBeUndefined();
  });

  it("waits SGLang's 300 s by default (and a prefill server as long for its decode server), and refuses a timeout that is not positive", () => {
    expect(DEFAULT_KV_WAITING_TIMEOUT_MS).toBe(300_000);
    expect(DEFAULT_BOOTSTRAP_TIMEOUT_MS).toBe(300_000);
    expect(resolvePdSettings(loadProfile())).toMatchObject({ kvWaitingTimeoutMs: 300_000, bootstrapTimeoutMs: 300_000 });
    expect(() => new DecodeRole<string>(kvLedger(10), 0, { register: () => undefined, submit: () => undefined }, 0)).toThrow(/positive/);
  });
});
