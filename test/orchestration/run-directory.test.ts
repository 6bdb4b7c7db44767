import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/validate.js';
import { nodeTestConfigSchema } from '../../src/config/schema.js';
import { createRunDirectory } from '../../src/orchestration/run-directory.js';

const made: string[] = [];
afterEach(async () => {
  for (const path of made.splice(0)) await rm(path, { recursive: true, force: true });
});

describe('run directories (issue 11)', () => {
  it('--run-id rejects "." and ".."', () => {
    for (const runId of ['.', '..']) {
      expect(() => parseConfig(nodeTestConfigSchema, { runId })).toThrow(/runId \(--run-id\): may not be "\." or "\.\."/);
    }
    expect(parseConfig(nodeTestConfigSchema, { runId: 'a.b' }).runId).toBe('a.b');
  });

  it('refuses a non-empty output directory, as its messages promise, and takes an empty or new one', async () => {
    const root = await mkdtemp(join(tmpdir(), 'servelab-rundir-'));
    made.push(root);
    const full = join(root, 'full');
    await mkdir(full);
    await writeFile(join(full, 'notes.txt'), 'mine');
    await expect(createRunDirectory({ outputDir: full, resultsRoot: root, testLevel: 'node' })).rejects.toThrow(
      /the output directory .*full is not empty \(1 entry: "notes.txt"\); give --output-dir a new or empty directory/,
    );
    const empty = join(root, 'empty');
    await mkdir(empty);
    await expect(createRunDirectory({ outputDir: empty, resultsRoot: root, testLevel: 'node' })).resolves.toMatchObject({ path: empty });
    await expect(createRunDirectory({ outputDir: join(root, 'new', 'deeper'), resultsRoot: root, testLevel: 'node' })).resolves.toBeDefined();
  });
});
