import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/validate.js';
import { nodeTestConfigSchema } from '../../src/config/schema.js';
import { createRunDirectory, RUN_CLAIM_FILE } from '../../src/orchestration/run-directory.js';
import { runCli } from '../helpers/cli.js';

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

  it('lets exactly one of several runs racing for one new directory claim it; the others get a one-line refusal (issue 29)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'servelab-rundir-'));
    made.push(root);
    for (const [index, target] of [join(root, 'new', 'shared'), join(root, 'existing-empty')].entries()) {
      if (index === 1) await mkdir(target);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 6 }, (_, run) => createRunDirectory({ outputDir: target, resultsRoot: root, runId: `run-${run}`, testLevel: 'node' })),
      );
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      expect(won, target).toHaveLength(1);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') expect((outcome.reason as Error).message).toMatch(/^the output directory .* (belongs to another servelab run|is not empty)[^\n]*$/);
      }
      const winner = (won[0] as PromiseFulfilledResult<{ runId: string }>).value.runId;
      expect(JSON.parse(await readFile(join(target, RUN_CLAIM_FILE), 'utf8'))).toMatchObject({ run_id: winner, pid: process.pid });
      // A later run is refused too, naming the run that holds the directory.
      await expect(createRunDirectory({ outputDir: target, resultsRoot: root, testLevel: 'node' })).rejects.toThrow(new RegExp(`belongs to another servelab run \\(run ${winner}, pid ${process.pid}\\)`));
    }
  });

  it('two servelab node runs started together into one new --output-dir: one runs, the other exits non-zero with one line', async () => {
    const root = await mkdtemp(join(tmpdir(), 'servelab-rundir-cli-'));
    made.push(root);
    const outputDir = join(root, 'shared');
    const run = (seed: number, prompts: number): ReturnType<typeof runCli> =>
      runCli(['node', '--request-rate', 'inf', '--num-prompts', String(prompts), '--random-input-len', '16', '--random-output-len', '4', '--seed', String(seed), '--output-dir', outputDir, '--progress', 'off']);
    const results = await Promise.all([run(1, 30), run(2, 40)]);
    const codes = results.map((result) => result.code);
    expect(codes.filter((code) => code === 0), JSON.stringify(results.map((result) => result.stderr))).toHaveLength(1);
    const loser = results.find((result) => result.code !== 0) as { stderr: string };
    const errorLines = loser.stderr.trim().split('\n').filter((line) => line.startsWith('servelab: '));
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toMatch(/output directory .*shared (belongs to another servelab run|is not empty)/);
    const winnerPrompts = results[0]?.code === 0 ? 30 : 40;
    const rows = (await readFile(join(outputDir, 'requests.csv'), 'utf8')).trim().split('\n').length - 1;
    expect(rows).toBe(winnerPrompts);
    expect(await readdir(outputDir)).toContain(RUN_CLAIM_FILE);
  }, 120_000);
});
