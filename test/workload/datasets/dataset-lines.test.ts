import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/utils/random.js';
import { MAX_DATASET_LINE_BYTES, readDatasetLines } from '../../../src/workload/datasets/dataset-lines.js';
import { loadDataset } from '../../../src/workload/datasets/dataset-registry.js';

/**
 * Hostile dataset files (issue 29): a line beyond what one row may hold ended in a stack trace (a gigabyte line passed
 * V8's longest string), and invalid UTF-8 was read silently as U+FFFD. Scaled down: a line just past the 64 MiB cap,
 * written in pieces, never built as one string here.
 */
let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'servelab-dataset-lines-'));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

const GOOD_ROW = JSON.stringify({ prompt: 'one two three', output_len: 4 });

/** A file whose second line is `bytes` long (its bytes written in 1 MiB pieces). */
async function fileWithLongSecondLine(name: string, firstRow: string, bytes: number): Promise<string> {
  const path = join(directory, name);
  const handle = await open(path, 'w');
  try {
    await handle.write(`${firstRow}\n{"prompt": "`);
    const piece = Buffer.alloc(2 ** 20, 0x61);
    for (let written = 0; written < bytes; written += piece.length) await handle.write(piece);
    await handle.write('", "output_len": 4}\n');
  } finally {
    await handle.close();
  }
  return path;
}

describe('JSONL dataset lines', () => {
  it('custom and mooncake: a line past the cap is one error naming the file, the line and the cap', async () => {
    const expected = (path: string): RegExp => new RegExp(`^dataset ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, line 2: longer than ${MAX_DATASET_LINE_BYTES} bytes`);
    const custom = await fileWithLongSecondLine('long-custom.jsonl', GOOD_ROW, MAX_DATASET_LINE_BYTES + 2 ** 20);
    await expect(loadDataset({ datasetName: 'custom', datasetPath: custom, numPrompts: 10 }, new SeededRandom(1))).rejects.toThrow(expected(custom));
    await rm(custom);
    const mooncakeRow = JSON.stringify({ timestamp: 0, input_length: 8, output_length: 4, hash_ids: [1] });
    const mooncake = await fileWithLongSecondLine('long-mooncake.jsonl', mooncakeRow, MAX_DATASET_LINE_BYTES + 2 ** 20);
    await expect(loadDataset({ datasetName: 'mooncake', datasetPath: mooncake, numPrompts: 10 }, new SeededRandom(1))).rejects.toThrow(expected(mooncake));
    await rm(mooncake);
  }, 30_000);

  it('invalid UTF-8 on a line is an error naming the file and the line, not silent replacement characters', async () => {
    const path = join(directory, 'latin1.jsonl');
    await writeFile(path, Buffer.concat([Buffer.from(`${GOOD_ROW}\n${GOOD_ROW}\n{"prompt": "caf`), Buffer.from([0xe9]), Buffer.from('", "output_len": 4}\n')]));
    await expect(loadDataset({ datasetName: 'custom', datasetPath: path, numPrompts: 10 }, new SeededRandom(1))).rejects.toThrow(/line 3: not valid UTF-8/);
  });

  it('splits lines across read chunks, keeps multi-byte characters whole, and reads a last line without a line end', async () => {
    const path = join(directory, 'lines.jsonl');
    const long = 'é'.repeat(100_000); // 200,000 bytes: crosses the stream's 64 KiB reads, a character cut at each boundary
    await writeFile(path, `first\r\n${long}\n\nlast`);
    const lines: { text: string; lineNumber: number }[] = [];
    for await (const line of readDatasetLines(path)) lines.push(line);
    expect(lines.map((line) => line.lineNumber)).toEqual([1, 2, 3, 4]);
    expect(lines.map((line) => line.text)).toEqual(['first\r', long, '', 'last']);
  });

  it('a small cap shows the cap counts bytes of the line, not of the file', async () => {
    const path = join(directory, 'small.jsonl');
    await writeFile(path, `${'a'.repeat(100)}\n${'b'.repeat(100)}\n${'c'.repeat(101)}\n`);
    const read: number[] = [];
    await expect(
      (async () => {
        for await (const line of readDatasetLines(path, 100)) read.push(line.lineNumber);
      })(),
    ).rejects.toThrow(/line 3: longer than 100 bytes/);
    expect(read).toEqual([1, 2]);
  });
});

describe('ShareGPT (one JSON array)', () => {
  it('invalid UTF-8 in an element is an error naming the file and the line the element starts on', async () => {
    const path = join(directory, 'sharegpt-latin1.json');
    const conversation = (text: string): string => JSON.stringify({ conversations: [{ from: 'human', value: text }, { from: 'gpt', value: 'an answer of some words' }] });
    await writeFile(
      path,
      Buffer.concat([Buffer.from(`[\n${conversation('a first question of words')},\n{"conversations": [{"from": "human", "value": "caf`), Buffer.from([0xe9]), Buffer.from('"}, {"from": "gpt", "value": "x y"}]}\n]\n')]),
    );
    await expect(loadDataset({ datasetName: 'sharegpt', datasetPath: path, numPrompts: 10 }, new SeededRandom(1))).rejects.toThrow(/line 3: element 1 is not valid UTF-8/);
  });
});
