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
    it(`${command}: submits a batch job instead of running here; --dry-run prints it and starts and writes nothing`, async () => {
      const outputDir = join(workDirectory, command);
      // Empty, as unset: runCli adds this process's environment, which may hold one.
      const result = await runCli([command, '--launcher', 'slurm', '--num-prompts', '5', '--output-dir', outputDir, '--progress', 'off', '--dry-run'], { env: { SLURM_JOB_ID: '' } });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^#!\/bin\/bash/);
      expect(result.stdout).toMatch(/#SBATCH --time="1:00:00"/);
      expect(result.stdout).toContain(`"test": "${command === 'node' ? 'node' : 'routing'}"`);
      expect(existsSync(outputDir)).toBe(false);
    });
  }

  it('refuses --gpus-per-node without it', async () => {
    const result = await runCli(['route', '--gpus-per-node', '2', '--num-prompts', '5', '--output-dir', join(workDirectory, 'gpus'), '--progress', 'off']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('--gpus-per-node says how many servers share a Slurm node; add --launcher slurm');
  });
});
