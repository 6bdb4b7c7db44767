import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-slurm-launcher-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('--launcher slurm outside an allocation', () => {
  for (const command of ['node', 'route']) {
    it(`${command}: refused before anything starts or is written, naming salloc`, async () => {
      const outputDir = join(workDirectory, command);
      // Empty, as unset: runCli adds this process's environment, which may hold one.
      const result = await runCli([command, '--launcher', 'slurm', '--num-prompts', '5', '--output-dir', outputDir, '--progress', 'off'], { env: { SLURM_JOB_ID: '' } });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/not inside one \(SLURM_JOB_ID is not set\).*salloc/);
      expect(existsSync(outputDir)).toBe(false);
    });
  }

  it('refuses --gpus-per-node without it', async () => {
    const result = await runCli(['route', '--gpus-per-node', '2', '--num-prompts', '5', '--output-dir', join(workDirectory, 'gpus'), '--progress', 'off']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('--gpus-per-node says how many servers share a Slurm node; add --launcher slurm');
  });
});
