import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJsonArrayElements } from '../../../src/workload/datasets/sharegpt/json-array-reader.js';
import { SeededRandom } from '../../../src/utils/random.js';

describe('readJsonArrayElements', () => {
  it('gives the same elements as JSON.parse of the whole file, whatever falls on chunk boundaries', async () => {
    const random = new SeededRandom(8);
    const pieces = ['plain', 'quote " inside', 'backslash \\ inside', 'both \\" and "\\', 'braces { [ ] }', 'unicode ✓ 日本語 😀', 'new\nline', ''];
    const elements: unknown[] = Array.from({ length: 3000 }, (_, index) => {
      const text = Array.from({ length: random.integer(1, 40) }, () => pieces[random.integer(0, pieces.length - 1)]).join(' ');
      switch (index % 5) {
        case 0:
          return { conversations: [{ from: 'human', value: text }, { from: 'gpt', value: text.toUpperCase() }] };
        case 1:
          return [text, index, null, true, { nested: [text] }];
        case 2:
          return text;
        case 3:
          return index * 1.5;
        default:
          return null;
      }
    });
    const directory = mkdtempSync(join(tmpdir(), 'servelab-json-reader-'));
    for (const [name, text] of [
      ['compact.json', JSON.stringify(elements)],
      ['pretty.json', `\uFEFF${JSON.stringify(elements, null, 2)}\n`],
    ] as const) {
      const path = join(directory, name);
      writeFileSync(path, text);
      const read: unknown[] = [];
      const count = await readJsonArrayElements(path, (element) => read.push(element));
      expect(count).toBe(elements.length);
      expect(read).toEqual(elements);
    }
  });

  it('reports the line an element starts on', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-json-reader-'));
    const path = join(directory, 'lines.json');
    writeFileSync(path, '[\n  {"a": "one\\ntwo"},\n\n  {"b": 2}\n]\n');
    const lines: number[] = [];
    await readJsonArrayElements(path, (_element, _index, lineNumber) => lines.push(lineNumber));
    expect(lines).toEqual([2, 4]);
    expect(await readJsonArrayElements(join(directory, 'lines.json'), () => undefined)).toBe(2);
    writeFileSync(path, '[]');
    expect(await readJsonArrayElements(path, () => undefined)).toBe(0);
  });
});
