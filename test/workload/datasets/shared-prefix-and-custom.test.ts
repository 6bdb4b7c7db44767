import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/utils/random.js';
import { countWordTokens } from '../../../src/utils/word-tokenizer.js';
import { scheduleFromRequestTimestamps } from '../../../src/workload/arrivals/trace/request-timestamps.js';
import { loadDataset } from '../../../src/workload/datasets/dataset-registry.js';

const fixtures = join(import.meta.dirname, '../../fixtures/datasets');

describe('shared-prefix dataset', () => {
  const settings = {
    datasetName: 'shared-prefix',
    numPrompts: 1000,
    gspNumGroups: 4,
    gspPromptsPerGroup: 5,
    gspSystemPromptLen: 50,
    gspQuestionLen: 10,
    gspOutputLen: 7,
  };

  it('makes groups × prompts requests whose group members share the system prompt, shuffled', async () => {
    const requests = await loadDataset(settings, new SeededRandom(1));
    expect(requests).toHaveLength(20);
    const byGroup = new Map<number, string[]>();
    for (const request of requests) {
      expect(request.inputLength).toBe(60);
      expect(countWordTokens(request.prompt ?? '')).toBe(60);
      expect(request.outputLength).toBe(7);
      const [systemPrompt, question] = (request.prompt ?? '').split('\n\n');
      expect(countWordTokens(systemPrompt ?? '')).toBe(50);
      expect(countWordTokens(question ?? '')).toBe(10);
      byGroup.set(request.prefixGroup ?? -1, [...(byGroup.get(request.prefixGroup ?? -1) ?? []), request.prompt ?? '']);
    }
    expect([...byGroup.keys()].sort()).toEqual([0, 1, 2, 3]);
    const systemPrompts = [...byGroup.values()].map((prompts) => new Set(prompts.map((prompt) => prompt.split('\n\n')[0])));
    expect(systemPrompts.every((prompts) => prompts.size === 1)).toBe(true);
    expect(new Set(systemPrompts.map((prompts) => [...prompts][0])).size).toBe(4);
    // Shuffled: not grouped in blocks.
    expect(requests.slice(0, 5).every((request) => request.prefixGroup === requests[0]?.prefixGroup)).toBe(false);
    expect(await loadDataset(settings, new SeededRandom(1))).toEqual(requests);
  });

  it('uses SGLang\'s defaults (64 groups × 16 prompts, 2048 + 128 tokens, 256 out)', async () => {
    const requests = await loadDataset({ datasetName: 'shared-prefix', numPrompts: 1 }, new SeededRandom(1));
    expect(requests).toHaveLength(1024);
    expect(requests[0]?.inputLength).toBe(2048 + 128);
    expect(requests[0]?.outputLength).toBe(256);
  });

  it('draws groups from a Zipf law when asked, most popular first', async () => {
    const requests = await loadDataset({ ...settings, gspNumGroups: 10, numPrompts: 5000, gspZipfExponent: 1.2 }, new SeededRandom(3));
    expect(requests).toHaveLength(5000);
    const counts = Array.from({ length: 10 }, (_, group) => requests.filter((request) => request.prefixGroup === group).length);
    const weights = Array.from({ length: 10 }, (_, group) => 1 / Math.pow(group + 1, 1.2));
    const total = weights.reduce((sum, weight) => sum + weight, 0);
    expect(counts[0]! / 5000).toBeCloseTo(weights[0]! / total, 1);
    expect(counts[0]).toBeGreaterThan(counts[1]! * 1.8);
    expect(counts[9]).toBeGreaterThan(0);
  });

  it('rejects impossible settings', async () => {
    await expect(loadDataset({ ...settings, gspNumGroups: 0 }, new SeededRandom(1))).rejects.toThrow(/gspNumGroups must be a whole number of at least 1/);
    await expect(loadDataset({ ...settings, gspZipfExponent: -1 }, new SeededRandom(1))).rejects.toThrow(/gspZipfExponent/);
  });
});

describe('custom dataset', () => {
  const path = join(fixtures, 'custom-small.jsonl');

  it('reads every row form in file order with timestamps, sessions and groups', async () => {
    const requests = await loadDataset({ datasetName: 'custom', datasetPath: path, numPrompts: 100 }, new SeededRandom(1));
    expect(requests).toHaveLength(5);
    expect(requests.map((request) => request.datasetIndex)).toEqual([0, 1, 2, 3, 4]);
    expect(requests[0]).toMatchObject({ prompt: 'Summarise the plot of a novel about routers', inputLength: 8, outputLength: 64, sessionId: 's1', timestampS: 100 });
    expect(requests[1]).toMatchObject({ outputLength: 16, sessionId: 's1', prefixGroup: 2 });
    expect(requests[2]).toMatchObject({ inputIds: [1, 2, 3, 4, 5], inputLength: 5, outputLength: 8 });
    expect(requests[3]?.messages).toHaveLength(2);
    expect(requests[3]).toMatchObject({ inputLength: 6, outputLength: 32 });
    expect(requests[4]).toMatchObject({ prompt: 'An SGLang style row with a question', outputLength: 7 });
    expect(Array.from(scheduleFromRequestTimestamps(requests.slice(0, 4), 2))).toEqual([0, 1000, 2500, 6000]);
  });

  it('takes the first numPrompts rows, and sharegptOutputLen fills in output lengths', async () => {
    const requests = await loadDataset({ datasetName: 'custom', datasetPath: path, numPrompts: 2, sharegptOutputLen: 5 }, new SeededRandom(1));
    expect(requests.map((request) => request.outputLength)).toEqual([5, 5]);
  });

  it('names the file, line and problem of a malformed row, and a missing file', async () => {
    await expect(
      loadDataset({ datasetName: 'custom', datasetPath: join(fixtures, 'custom-missing-output.jsonl'), numPrompts: 10 }, new SeededRandom(1)),
    ).rejects.toThrow(/custom-missing-output\.jsonl, line 2: no output length/);
    await expect(
      loadDataset({ datasetName: 'custom', datasetPath: join(fixtures, 'sharegpt-small.json'), numPrompts: 10 }, new SeededRandom(1)),
    ).rejects.toThrow(/sharegpt-small\.json, line 1: not valid JSON/);
    await expect(loadDataset({ datasetName: 'custom', datasetPath: join(fixtures, 'absent.jsonl'), numPrompts: 10 }, new SeededRandom(1))).rejects.toMatchObject({
      code: 'FILE_NOT_FOUND',
    });
  });

  it('refuses a schedule from rows without timestamps', () => {
    expect(() => scheduleFromRequestTimestamps([{ datasetIndex: 0, prompt: 'a b', inputLength: 2, outputLength: 2 }])).toThrow(/no timestamp/);
  });
});
