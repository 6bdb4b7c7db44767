import { describe, expect, it } from 'vitest';
import { injectBootstrap, newBootstrapRoom } from '../../../src/routing/pd/bootstrap.js';
import { choosePdPair, pdPolicyNames } from '../../../src/routing/pd/pd-pair.js';
import { createRoundRobinPolicy } from '../../../src/routing/policies/round-robin/round-robin-policy.js';
import type { WorkerState } from '../../../src/types/routing.js';

describe('newBootstrapRoom', () => {
  it('clears the top bit of 8 random bytes: a room in [0, 2^63 - 1], exact beyond 2^53', () => {
    expect(newBootstrapRoom(() => new Uint8Array(8).fill(0xff))).toBe((1n << 63n) - 1n);
    expect(newBootstrapRoom(() => new Uint8Array(8))).toBe(0n);
    expect(newBootstrapRoom(() => Uint8Array.from([0x80, 0, 0, 0, 0, 0, 0, 1]))).toBe(1n);
    const rooms = new Set(Array.from({ length: 100 }, () => newBootstrapRoom()));
    expect(rooms.size).toBe(100);
    for (const room of rooms) expect(room >= 0n && room < 1n << 63n).toBe(true);
  });
});

describe('injectBootstrap', () => {
  it("adds the prefill server's host and port and the room as an exact integer, replacing the client's", () => {
    const room = 9007199254740993n; // 2^53 + 1: a double would round it to 2^53.
    const text = injectBootstrap('{"text":"hi","bootstrap_room":5,"sampling_params":{"max_new_tokens":3}}', { host: '127.0.0.1', port: 8998 }, room);
    expect(text).toContain('"bootstrap_room":9007199254740993}');
    expect(text.match(/bootstrap_room/g)).toHaveLength(1);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    expect(parsed).toMatchObject({ text: 'hi', bootstrap_host: '127.0.0.1', bootstrap_port: 8998, sampling_params: { max_new_tokens: 3 } });
  });

  it('writes a null port for a prefill server without a bootstrap port, and refuses a body that is not an object', () => {
    expect(JSON.parse(injectBootstrap('{}', { host: 'h', port: null }, 7n))).toEqual({ bootstrap_host: 'h', bootstrap_port: null, bootstrap_room: 7 });
    expect(() => injectBootstrap('[1]', { host: 'h', port: 1 }, 1n)).toThrow(/JSON object/);
    expect(() => injectBootstrap('not json', { host: 'h', port: 1 }, 1n)).toThrow(/must be JSON/);
  });
});

describe('PD pair selection', () => {
  const worker = (url: string, index: number): WorkerState => ({ url, index, healthy: true, drained: false, inFlight: 0 });
  const prefills = [worker('http://p0', 0), worker('http://p1', 1)];
  const decodes = [worker('http://d0', 2), worker('http://d1', 3), worker('http://d2', 4)];

  it('chooses each side with its own policy, and none when a side has no eligible server', () => {
    const prefillPolicy = createRoundRobinPolicy({});
    const decodePolicy = createRoundRobinPolicy({});
    const request = { requestId: 'r', routingKey: '' };
    const pairs = Array.from({ length: 6 }, () => {
      const pair = choosePdPair(request, prefillPolicy, prefills, decodePolicy, decodes);
      return `${pair?.prefill.url} ${pair?.decode.url}`;
    });
    // Two prefill servers and three decode servers cycle independently: every pair of the 2 x 3 appears once.
    expect(new Set(pairs).size).toBe(6);
    expect(choosePdPair(request, prefillPolicy, prefills, decodePolicy, decodes.map((state) => ({ ...state, healthy: false })))).toBeUndefined();
  });

  it("falls back to the main policy for a side whose policy is not named, as smg's flags do", () => {
    expect(pdPolicyNames('cache_aware')).toEqual({ prefillPolicy: 'cache_aware', decodePolicy: 'cache_aware' });
    expect(pdPolicyNames('cache_aware', undefined, 'power_of_two')).toEqual({ prefillPolicy: 'cache_aware', decodePolicy: 'power_of_two' });
  });
});
