import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DatasetSettings } from '../../../src/types/workload-settings.js';
import { SeededRandom } from '../../../src/utils/random.js';
import { countWordTokens } from '../../../src/utils/word-tokenizer.js';
import { loadDataset } from '../../../src/workload/datasets/dataset-registry.js';

const fixtures = join(import.meta.dirname, '../../fixtures/datasets');

function settings(overrides: Partial<DatasetSettings>): DatasetSettings {
  return { datasetName: 'random', numPrompts: 200, randomInputLen: 100, randomOutputLen: 40, randomRangeRatio: 0.5, ...overrides };
}

describe('random dataset', () => {
  it('draws prompt and output lengths uniformly in [floor(len × ratio), len], with exact word-token prompts', async () => {
    const requests = await loadDataset(settings({ numPrompts: 2000 }), new SeededRandom(1));
    expect(requests).toHaveLength(2000);
    const inputLengths = requests.map((request) => request.inputLength);
    const outputLengths = requests.map((request) => request.outputLength);
    expect(Math.min(...inputLengths)).toBe(50);
    expect(Math.max(...inputLengths)).toBe(100);
    expect(Math.min(...outputLengths)).toBe(20);
    expect(Math.max(...outputLengths)).toBe(40);
    const meanInput = inputLengths.reduce((sum, length) => sum + length, 0) / inputLengths.length;
    expect(meanInput).toBeGreaterThan(73);
    expect(meanInput).toBeLessThan(77);
    requests.forEach((request, index) => {
      expect(request.datasetIndex).toBe(index);
      expect(countWordTokens(request.prompt ?? '')).toBe(request.inputLength);
      expect(request.inputIds).toBeUndefined();
    });
  });

  it('ratio 1 gives exact lengths; ratio 0 starts at 1 token as SGLang does', async () => {
    const exact = await loadDataset(settings({ randomRangeRatio: 1 }), new SeededRandom(2));
    expect(new Set(exact.map((request) => request.inputLength))).toEqual(new Set([100]));
    expect(new Set(exact.map((request) => request.outputLength))).toEqual(new Set([40]));
    const wide = await loadDataset(settings({ numPrompts: 3000, randomInputLen: 4, randomRangeRatio: 0 }), new SeededRandom(2));
    expect(new Set(wide.map((request) => request.inputLength))).toEqual(new Set([1, 2, 3, 4]));
  });

  it('is reproducible from the seed', async () => {
    const first = await loadDataset(settings({}), new SeededRandom(5));
    const again = await loadDataset(settings({}), new SeededRandom(5));
    const other = await loadDataset(settings({}), new SeededRandom(6));
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
  });

  it('rejects impossible settings', async () => {
    await expect(loadDataset(settings({ randomInputLen: 0 }), new SeededRandom(1))).rejects.toThrow(/randomInputLen must be a whole number/);
    await expect(loadDataset(settings({ randomRangeRatio: 1.5 }), new SeededRandom(1))).rejects.toThrow(/randomRangeRatio must lie between 0 and 1/);
    await expect(loadDataset(settings({ numPrompts: 0 }), new SeededRandom(1))).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });
});

describe('random-ids dataset', () => {
  it('gives exact input_ids lengths within the vocabulary', async () => {
    const requests = await loadDataset(
      settings({ datasetName: 'random-ids', randomIdsVocabSize: 1000, numPrompts: 300 }),
      new SeededRandom(3),
    );
    for (const request of requests) {
      expect(request.prompt).toBeUndefined();
      expect(request.inputIds).toHaveLength(request.inputLength);
      expect(request.inputLength).toBeGreaterThanOrEqual(50);
      expect(request.inputLength).toBeLessThanOrEqual(100);
      for (const id of request.inputIds ?? []) {
        expect(Number.isInteger(id) && id >= 0 && id < 1000).toBe(true);
      }
    }
    const again = await loadDataset(settings({ datasetName: 'random-ids', randomIdsVocabSize: 1000, numPrompts: 300 }), new SeededRandom(3));
    expect(again).toEqual(requests);
  });
});

describe('sharegpt dataset', () => {
  const path = join(fixtures, 'sharegpt-small.json');

  it('takes the first human turn as prompt and the next gpt turn for the output length, dropping too-short pairs', async () => {
    const requests = await loadDataset({ datasetName: 'sharegpt', datasetPath: path, numPrompts: 100 }, new SeededRandom(1));
    // 7 conversations: "d" has no answer, "c" has a one-word prompt, "g" a one-word answer: 4 remain.
    expect(requests).toHaveLength(4);
    const prompts = requests.map((request) => request.prompt);
    expect(prompts).toContain('What is the capital of France and why is it famous?');
    expect(prompts).toContain('Explain a radix tree in two sentences please.');
    expect(prompts.some((prompt) => prompt?.includes('日本語 "quoted" and \\ backslash'))).toBe(true);
    const france = requests.find((request) => request.prompt?.startsWith('What is the capital'));
    expect(france?.inputLength).toBe(11);
    expect(france?.outputLength).toBe(countWordTokens('Paris is the capital of France. It is famous for art, food and the Eiffel Tower.'));
    requests.forEach((request, index) => expect(request.datasetIndex).toBe(index));
  });

  it('samples numPrompts after a seeded shuffle, and honours sharegptOutputLen and sharegptContextLen', async () => {
    const first = await loadDataset({ datasetName: 'sharegpt', datasetPath: path, numPrompts: 2 }, new SeededRandom(9));
    const again = await loadDataset({ datasetName: 'sharegpt', datasetPath: path, numPrompts: 2 }, new SeededRandom(9));
    expect(first).toHaveLength(2);
    expect(again).toEqual(first);
    const orders = new Set<string>();
    for (let seed = 0; seed < 8; seed++) {
      const requests = await loadDataset({ datasetName: 'sharegpt', datasetPath: path, numPrompts: 4 }, new SeededRandom(seed));
      orders.add(requests.map((request) => request.prompt).join('|'));
    }
    expect(orders.size).toBeGreaterThan(1);
    const fixed = await loadDataset({ datasetName: 'sharegpt', datasetPath: path, numPrompts: 100, sharegptOutputLen: 64 }, new SeededRandom(1));
    // A fixed output length also rescues "g", whose own answer was too short.
    expect(fixed).toHaveLength(5);
    expect(fixed.every((request) => request.outputLength === 64)).toBe(true);
    const short = await loadDataset({ datasetName: 'sharegpt', datasetPath: path, numPrompts: 100, sharegptContextLen: 20 }, new SeededRandom(1));
    expect(short.every((request) => request.inputLength + request.outputLength <= 20)).toBe(true);
    expect(short.length).toBeLessThan(4);
  });

  it('names the file and the fix when the file is missing', async () => {
    const missing = join(fixtures, 'no-such-file.json');
    const failure = loadDataset({ datasetName: 'sharegpt', datasetPath: missing, numPrompts: 10 }, new SeededRandom(1));
    await expect(failure).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    await expect(failure).rejects.toThrow(/no-such-file\.json.*--dataset-path.*never downloads/);
    await expect(loadDataset({ datasetName: 'sharegpt', numPrompts: 10 }, new SeededRandom(1))).rejects.toThrow(/needs --dataset-path/);
  });

  it('names the file and line of malformed JSON and of a non-ShareGPT entry', async () => {
    const malformed = loadDataset({ datasetName: 'sharegpt', datasetPath: join(fixtures, 'sharegpt-malformed.json'), numPrompts: 10 }, new SeededRandom(1));
    await expect(malformed).rejects.toMatchObject({ code: 'INVALID_DATASET' });
    await expect(malformed).rejects.toThrow(/sharegpt-malformed\.json, line 6: element 1 is not valid JSON/);
    await expect(
      loadDataset({ datasetName: 'sharegpt', datasetPath: join(fixtures, 'sharegpt-wrong-shape.json'), numPrompts: 10 }, new SeededRandom(1)),
    ).rejects.toThrow(/sharegpt-wrong-shape\.json, line 6 \(conversation 1\): no "conversations" field/);
  });

  it('rejects files that are not one JSON array, and a file with no usable pair', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-sharegpt-'));
    const cases: [string, RegExp][] = [
      ['', /empty/],
      ['{"conversations": []}', /does not start with a JSON array/],
      ['[{"conversations": []}', /ends before the array's closing/],
      ['[{"conversations": []} {"conversations": []}]', /missing comma/],
      ['[{"conversations": []}] trailing', /after the closing/],
      ['[{"conversations": [{"from": "human", "value": "x"}, {"from": "gpt", "value": "y"}]}]', /no usable conversation/],
    ];
    for (const [index, [content, problem]] of cases.entries()) {
      const path = join(directory, `case-${index}.json`);
      writeFileSync(path, content);
      const failure = loadDataset({ datasetName: 'sharegpt', datasetPath: path, numPrompts: 10 }, new SeededRandom(1));
      await expect(failure).rejects.toMatchObject({ code: 'INVALID_DATASET' });
      await expect(failure).rejects.toThrow(problem);
    }
  });

  it('reads elements that span the reader\'s chunks', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-sharegpt-'));
    const path = join(directory, 'large.json');
    const conversations = Array.from({ length: 400 }, (_, index) => ({
      conversations: [
        { from: 'human', value: `question ${index} ${'word '.repeat(200)}` },
        { from: 'gpt', value: `answer ${index} ${'ok '.repeat(50)}` },
      ],
    }));
    writeFileSync(path, JSON.stringify(conversations, null, 1));
    const requests = await loadDataset({ datasetName: 'sharegpt', datasetPath: path, numPrompts: 400 }, new SeededRandom(1));
    expect(requests).toHaveLength(400);
    expect(new Set(requests.map((request) => request.prompt?.split(' ')[1])).size).toBe(400);
    expect(requests.every((request) => request.inputLength === 202 && request.outputLength === 52)).toBe(true);
  });
});

describe('dataset registry', () => {
  it('loads an unknown name as a module path and fails clearly when it is not one', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-dataset-module-'));
    const modulePath = join(directory, 'tiny-dataset.mjs');
    writeFileSync(
      modulePath,
      'export function loadDataset(settings) { return Promise.resolve(Array.from({ length: settings.numPrompts }, (_, i) => ({ datasetIndex: i, prompt: "hi there", inputLength: 2, outputLength: 3 }))); }\n',
    );
    const requests = await loadDataset({ datasetName: modulePath, numPrompts: 3 }, new SeededRandom(1));
    expect(requests.map((request) => request.outputLength)).toEqual([3, 3, 3]);
    await expect(loadDataset({ datasetName: join(directory, 'absent.mjs'), numPrompts: 3 }, new SeededRandom(1))).rejects.toMatchObject({
      code: 'MODULE_LOAD_FAILED',
    });
  });
});
