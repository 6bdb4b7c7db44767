import { describe, expect, it } from 'vitest';
import { kvBytesPerToken } from '../../../src/engine/disaggregation/kv-bytes.js';
import { KV_TRANSFER_DEFAULTS, KvTransferLink } from '../../../src/engine/disaggregation/kv-transfer-link.js';
import { isServelabError } from '../../../src/errors/servelab-error.js';
import { loadProfile } from '../../../src/engine/profile/load-profile.js';

const KIB = 1024;

describe('kvBytesPerToken', () => {
  it('is 2 x layers x KV heads x head dim x bytes: Llama-3-8B bf16 = 128 KiB, Llama-3-70B bf16 = 320 KiB', () => {
    // Llama-3-8B: 32 layers, 8 KV heads of 128; Llama-3-70B: 80 layers, 8 KV heads of 128 (their config.json).
    expect(kvBytesPerToken({ layers: 32, kvHeads: 8, headDim: 128, bytesPerElement: 2 })).toBe(128 * KIB);
    expect(kvBytesPerToken({ layers: 80, kvHeads: 8, headDim: 128, bytesPerElement: 2 })).toBe(320 * KIB);
    expect(kvBytesPerToken({ layers: 32, kvHeads: 8, headDim: 128, bytesPerElement: 1 })).toBe(64 * KIB);
  });

  it('agrees with the figure the built-in Llama-3-8B profile carries', () => {
    const profile = loadProfile('llama-3-8b-h100');
    expect(profile.kind === 'roofline' ? profile.kvBytesPerToken : undefined).toBe(kvBytesPerToken({ layers: 32, kvHeads: 8, headDim: 128, bytesPerElement: 2 }));
  });
});

describe('KvTransferLink', () => {
  // 1 GB/s is 1e6 bytes per millisecond: easy figures to check by hand.
  const settings = { bandwidthBytesPerSecond: 1e9, latencyMs: 2 };

  it('moves a transfer alone on the link in exactly bytes / bandwidth + latency', () => {
    const link = new KvTransferLink(settings);
    link.start('a', 5e6, 100);
    expect(link.nextEventMs()).toBe(100 + 5 + 2);
    expect(link.advanceTo(106.999)).toEqual([]);
    expect(link.advanceTo(107)).toEqual([{ id: 'a', finishMs: 107 }]);
    expect(link.nextEventMs()).toBe(Number.POSITIVE_INFINITY);
  });

  it('shares the bandwidth among transfers in flight: two equal ones started together each take twice as long', () => {
    const link = new KvTransferLink(settings);
    link.start('a', 4e6, 0);
    link.start('b', 4e6, 0);
    expect(link.nextEventMs()).toBe(8 + 2);
    expect(link.advanceTo(10).map((done) => [done.id, done.finishMs])).toEqual([['a', 10], ['b', 10]]);
  });

  it('speeds the others up when one drains, and slows one down when another joins', () => {
    const link = new KvTransferLink(settings);
    link.start('long', 6e6, 0);
    // Alone for 2 ms (2e6 bytes moved), then shared with 'short' (1e6 bytes): 'short' drains at 2 + 2 = 4 ms, 'long'
    // has then 6e6 - 2e6 - 1e6 = 3e6 left, alone again: drains at 7 ms. Each arrives 2 ms after it drains.
    link.advanceTo(2);
    link.start('short', 1e6, 2);
    expect(link.advanceTo(100)).toEqual([{ id: 'short', finishMs: 6 }, { id: 'long', finishMs: 9 }]);
  });

  it('delivers a transfer of no bytes after the latency alone', () => {
    const link = new KvTransferLink(settings);
    link.start('empty', 0, 10);
    expect(link.advanceTo(12)).toEqual([{ id: 'empty', finishMs: 12 }]);
  });

  it('takes an idle Llama-3-8B prompt of 1000 tokens over the default link in 128 KiB x 1000 / 25 GB/s + 0.5 ms', () => {
    const link = new KvTransferLink(KV_TRANSFER_DEFAULTS);
    const bytes = 1000 * 128 * KIB;
    link.start('prompt', bytes, 0);
    const [done] = link.advanceTo(1000);
    expect(done?.finishMs).toBeCloseTo((bytes / 25e9) * 1000 + 0.5, 9);
  });

  it('refuses a link without bandwidth and a clock that goes back, naming the fix', () => {
    const refused = (() => {
      try {
        return new KvTransferLink({ bandwidthBytesPerSecond: 0, latencyMs: 0 });
      } catch (error) {
        return error;
      }
    })();
    expect(isServelabError(refused) && refused.code).toBe('INVALID_CONFIG');
    const link = new KvTransferLink(settings);
    link.start('a', 1e6, 10);
    expect(() => link.advanceTo(5)).toThrow(/monotonic clock/);
  });
});
