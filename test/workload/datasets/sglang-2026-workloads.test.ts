import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { loadDataset } from '../../../src/workload/datasets/dataset-registry.js';
import { SeededRandom } from '../../../src/utils/random.js';
import type { DatasetSettings } from '../../../src/types/workload-settings.js';
import { sendOnce } from '../../clients/helpers/one-shot.js';
import { sglangWire } from '../../clients/helpers/wires.js';

/**
 * SGLang's newest benchmark workloads (python/sglang/benchmark/datasets/generated_shared_prefix.py and mooncake.py
 * in sgl-project/sglang). The trace fixture is hand-written in the Mooncake trace format (timestamp ms, input_length,
 * output_length, hash_ids), not taken from a published trace.
 */
const MOONCAKE = fileURLToPath(new URL('../../fixtures/datasets/mooncake-trace.jsonl', import.meta.url));
const gsp = (extra: Partial<DatasetSettings>): DatasetSettings => ({
  datasetName: 'shared-prefix',
  numPrompts: 10,
  gspNumGroups: 4,
  gspPromptsPerGroup: 5,
  gspSystemPromptLen: 40,
  gspQuestionLen: 5,
  gspOutputLen: 3,
  ...extra,
});

describe('shared-prefix: SGLang\'s newest flags', () => {
  it('--gsp-send-routing-key gives every request of a group one key, and groups different keys', async () => {
    const requests = await loadDataset(gsp({ gspSendRoutingKey: true }), new SeededRandom(1));
    const keyOfGroup = new Map<number, Set<string>>();
    for (const request of requests) {
      const keys = keyOfGroup.get(request.prefixGroup!) ?? new Set<string>();
      keys.add(request.routingKey!);
      keyOfGroup.set(request.prefixGroup!, keys);
    }
    expect([...keyOfGroup.values()].map((keys) => keys.size)).toEqual([1, 1, 1, 1]);
    expect(new Set([...keyOfGroup.values()].map((keys) => [...keys][0])).size).toBe(4);
    expect((await loadDataset(gsp({}), new SeededRandom(1))).every((request) => request.routingKey === undefined)).toBe(true);
  });

  it('the routing key goes out as X-SMG-Routing-Key', async () => {
    const exchange = await sendOnce('sglang', { requestId: 'r1', workload: { datasetIndex: 0, prompt: 'a b', inputLength: 2, outputLength: 1, routingKey: 'run_3' } }, [sglangWire.tokenEvent(1, { finish: 'length' }), '[DONE]']);
    expect(exchange.sent.headers['x-smg-routing-key']).toBe('run_3');
  });

  it('--gsp-group-distribution zipf keeps groups × prompts requests and makes group 0 the hottest', async () => {
    const requests = await loadDataset(gsp({ gspNumGroups: 8, gspPromptsPerGroup: 50, gspGroupDistribution: 'zipf', gspZipfAlpha: 1.5 }), new SeededRandom(2));
    expect(requests).toHaveLength(400);
    const counts = new Array<number>(8).fill(0);
    for (const request of requests) counts[request.prefixGroup!]!++;
    expect(counts[0]).toBe(Math.max(...counts));
    expect(counts[0]!).toBeGreaterThan(counts[7]! * 4);
    await expect(loadDataset(gsp({ gspGroupDistribution: 'zipf' }), new SeededRandom(2))).rejects.toThrow(/needs --gsp-zipf-alpha/);
  });

  it('--gsp-num-turns makes conversations whose turns extend each other and go out in order', async () => {
    const requests = await loadDataset(gsp({ gspNumTurns: 3 }), new SeededRandom(3));
    expect(requests).toHaveLength(4 * 5 * 3);
    const bySession = new Map<string, string[]>();
    for (const request of requests) bySession.set(request.sessionId!, [...(bySession.get(request.sessionId!) ?? []), request.prompt!]);
    expect(bySession.size).toBe(20);
    for (const prompts of bySession.values()) {
      expect(prompts).toHaveLength(3);
      expect(prompts[1]!.startsWith(`${prompts[0]}\n\n`)).toBe(true);
      expect(prompts[2]!.startsWith(`${prompts[1]}\n\n`)).toBe(true);
    }
  });
});

describe('mooncake traces (local files only)', () => {
  it('replays records in timestamp order with prompts built from hash ids, sharing prefixes where the ids do', async () => {
    const requests = await loadDataset({ datasetName: 'mooncake', datasetPath: MOONCAKE, numPrompts: 10 }, new SeededRandom(1));
    expect(requests.map((request) => request.timestampS)).toEqual([0, 0.5, 2]);
    expect(requests.map((request) => request.outputLength)).toEqual([4, 6, 8]);
    const hi = new Array<string>(128).fill('hi').join(' ');
    expect(requests[0]!.prompt).toBe(`user: Round 1: 0${hi}1${hi}2${hi}Tell me a story based on this context.`);
    // Records 0 and 2 of the file share hash ids 0 and 1: their prompts share that prefix.
    expect(requests[2]!.prompt!.startsWith(`user: Round 1: 0${hi}1${hi}`)).toBe(true);
  });

  it('makes --mooncake-num-rounds rounds per session with a placeholder answer between them', async () => {
    const requests = await loadDataset({ datasetName: 'mooncake', datasetPath: MOONCAKE, numPrompts: 1, mooncakeNumRounds: 2 }, new SeededRandom(1));
    expect(requests).toHaveLength(2);
    expect(requests[1]!.prompt!.startsWith(`${requests[0]!.prompt}\nassistant: story story`)).toBe(true);
    expect(requests[1]!.prompt).toContain('\nuser: Round 2: ');
    expect(requests[0]!.sessionId).toBe(requests[1]!.sessionId);
  });

  it('refuses a missing file with the fix, and a malformed line with its number', async () => {
    await expect(loadDataset({ datasetName: 'mooncake', datasetPath: '/nonexistent/trace.jsonl', numPrompts: 1 }, new SeededRandom(1))).rejects.toThrow(/never downloads/);
    await expect(loadDataset({ datasetName: 'mooncake', numPrompts: 1 }, new SeededRandom(1))).rejects.toThrow(/needs --dataset-path/);
  });
});
