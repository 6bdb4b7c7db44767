import { describe, expect, it } from 'vitest';
import { VirtualPdCluster } from '../../../src/engine/virtual/virtual-pd-cluster.js';

/** A PD decode server reserves a prompt's KV before it arrives: with pages, in whole pages, and gives every page back. */
describe('PD with a page size', () => {
  it("a decode server's reservation takes whole pages, and a run leaves both servers' pools empty", async () => {
    const profile = { kind: 'simple' as const, stepMs: 5, maxTotalTokens: 100_000, contextLength: 10_000, kvBytesPerToken: 1024, kvTransfer: { bandwidthBytesPerSecond: 1e9, latencyMs: 0.5 } };
    const finished: string[] = [];
    const pd = await VirtualPdCluster.create({
      prefill: [{ profile, pageSize: 16, maxRunningRequests: 64 }],
      decode: [{ profile, pageSize: 16, maxRunningRequests: 64 }],
      events: { onToken: () => undefined, onFinish: (_decode, view) => finished.push(view.id) },
    });
    const decode = pd.simulator.engine(1);
    pd.submit(0, 0, '1', { id: 'first', promptTokenIds: Array.from({ length: 1000 }, (_unused, index) => 7 + index), maxNewTokens: 40 }, 0);
    // 1000 prompt tokens take 63 pages of 16 (1008 slots) on the decode server, reserved as the request arrives.
    pd.advanceTo(1);
    expect(decode.load().usedTokens).toBe(1008);
    for (let index = 0; index < 30; index++) {
      const length = 20 + ((index * 37) % 300);
      pd.submit(0, 0, `${index + 2}`, { id: `r${index}`, promptTokenIds: Array.from({ length }, (_unused, position) => 50_000 + index * 1000 + position), maxNewTokens: 5 + (index % 30) }, 2 + index * 3);
    }
    pd.runUntilIdle();
    expect(finished).toHaveLength(31);
    expect(decode.load().usedTokens).toBe(0);
    expect(decode.availableKvTokens).toBe(100_000);
    // The prefill server keeps its radix cache: what is left there is whole pages, all of it evictable.
    const prefill = pd.simulator.engine(0).load();
    expect(prefill.usedTokens).toBe(0);
    expect(prefill.evictableTokens % 16).toBe(0);
    expect(prefill.evictableTokens).toBeGreaterThan(0);
  });
});
