import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildJobScript } from '../../../src/cluster/slurm-jobs/job-script.js';
import { directiveWord } from '../../../src/cluster/slurm-jobs/job-quoting.js';
import { jobRequestFor, nodesForRun, type JobRequestContext } from '../../../src/cluster/slurm-jobs/job-request.js';
import { NodeTest } from '../../../src/experiments/node-test.js';

const printArgv = fileURLToPath(new URL('../../fixtures/slurm-jobs/print-argv.mjs', import.meta.url));
let workDirectory: string;
let context: JobRequestContext;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-job-script-'));
  context = { workingDirectory: workDirectory, nodeExecutable: process.execPath, cliPath: printArgv };
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const directives = (script: string): string[] => script.split('\n').filter((line) => line.startsWith('#SBATCH '));

describe('the batch script of a submitted run', () => {
  it('carries every Slurm setting as an #SBATCH line, before the first command', () => {
    const request = jobRequestFor('routing', {
      launcher: 'slurm',
      numGpus: 16,
      gpusPerNode: 8,
      slurmPartition: 'gpu',
      slurmAccount: 'lab-7',
      slurmTime: '0-02:30:00',
      slurmArgs: ['--gres=gpu:8', '--exclusive'],
      runId: 'r1',
    }, context);
    const script = buildJobScript(request.spec);
    expect(directives(script)).toEqual([
      '#SBATCH --job-name="servelab-r1"',
      '#SBATCH --nodes=2',
      '#SBATCH --time="0-02:30:00"',
      '#SBATCH --signal=B:TERM@120',
      `#SBATCH --output="${join(workDirectory, 'results', '.r1.slurm-job', 'slurm-job.out')}"`,
      `#SBATCH --error="${join(workDirectory, 'results', '.r1.slurm-job', 'slurm-job.err')}"`,
      `#SBATCH --chdir="${workDirectory}"`,
      '#SBATCH --partition="gpu"',
      '#SBATCH --account="lab-7"',
      '#SBATCH "--gres=gpu:8"',
      '#SBATCH "--exclusive"',
    ]);
    // sbatch reads directives only until the first command.
    const lines = script.split('\n');
    const lastDirective = lines.map((line) => line.startsWith('#SBATCH ')).lastIndexOf(true);
    expect(lines.slice(1, lastDirective + 1).every((line) => line.startsWith('#SBATCH '))).toBe(true);
    // The run inside gets no submission-only setting, and runs placed by Slurm.
    expect(request.spec.settings).toMatchObject({ test: 'routing', launcher: 'slurm', numGpus: 16, gpusPerNode: 8, runId: 'r1', progress: 'lines' });
    for (const key of ['slurmPartition', 'slurmAccount', 'slurmTime', 'slurmArgs', 'slurmNodes']) expect(request.spec.settings).not.toHaveProperty(key);
  });

  it('sets a time limit by default (never unlimited), warns before it, and refuses an unlimited one', () => {
    const byDefault = buildJobScript(jobRequestFor('node', { launcher: 'slurm' }, context).spec);
    expect(byDefault).toContain('#SBATCH --time="1:00:00"\n');
    expect(byDefault).toContain('#SBATCH --signal=B:TERM@120\n');
    expect(buildJobScript(jobRequestFor('node', { launcher: 'slurm', slurmTime: '2' }, context).spec)).toContain('#SBATCH --signal=B:TERM@60\n');
    for (const unlimited of ['UNLIMITED', 'infinite', '0', '-1', '1:00:00:00']) {
      expect(() => jobRequestFor('node', { launcher: 'slurm', slurmTime: unlimited }, context)).toThrow(/slurmTime \(--slurm-time\): must be a Slurm time limit above 0/);
    }
  });

  it('asks for the nodes the run needs: servers / gpus-per-node (else one a node), a node per extra load generator, or --slurm-nodes', () => {
    const nodes = (test: 'node' | 'routing', settings: Record<string, unknown>): number => jobRequestFor(test, { launcher: 'slurm', ...settings }, context).spec.nodes;
    expect(nodes('node', {})).toBe(1);
    expect(nodes('routing', { numGpus: 9, gpusPerNode: 8 })).toBe(2);
    // Without --gpus-per-node the placement spreads servers one a node.
    expect(nodes('routing', { numGpus: 4 })).toBe(4);
    expect(nodes('routing', { numGpus: 64, slurmNodes: 3 })).toBe(3);
    // --client-nodes N > 1 runs N load-generator processes, each on a node; 1 is the coordinator itself.
    expect(nodesForRun('routing', { numGpus: 4, clientNodes: 3 })).toBe(7);
    expect(nodesForRun('routing', { numGpus: 4, clientNodes: 1 })).toBe(4);
  });

  it('refuses Slurm settings on a run that Slurm does not place', () => {
    expect(() => new NodeTest({ slurmPartition: 'gpu', slurmTime: '10' })).toThrow(/--slurm-partition, --slurm-time apply to runs placed by Slurm; add --launcher slurm/);
  });

  it('makes relative paths absolute on the submitting side and keeps an infinite rate readable', () => {
    const request = jobRequestFor('node', { launcher: 'slurm', datasetName: 'custom', datasetPath: 'data/prompts.jsonl', requestRate: Infinity }, context);
    expect(request.spec.settings['datasetPath']).toBe(join(workDirectory, 'data', 'prompts.jsonl'));
    const written = JSON.parse(/<<'SERVELAB_SETTINGS_END'\n([\s\S]*?)\nSERVELAB_SETTINGS_END/.exec(buildJobScript(request.spec))?.[1] ?? '') as Record<string, unknown>;
    expect(written['requestRate']).toBe('Infinity');
    const { test: _test, ...settings } = written;
    expect(new NodeTest(settings).config.requestRate).toBe(Infinity);
  });

  it('writes hostile arguments and paths as plain text: a space, quotes, $(...), backticks, a #', async () => {
    const marker = join(workDirectory, 'expanded');
    const hostile = `run dir "q" it's $(touch ${marker}) \`touch ${marker}\` #c`;
    const request = jobRequestFor('node', { launcher: 'slurm', outputDir: hostile, slurmArgs: [`--comment=${hostile}`] }, context);
    const script = buildJobScript(request.spec);
    // sbatch's directive reader (Slurm's src/sbatch/opt.c): quotes group, a backslash makes the next character plain.
    expect(script).toContain(`#SBATCH "--comment=run dir \\"q\\" it's $(touch ${marker}) \`touch ${marker}\` #c"\n`);
    // The body, as bash runs it: the settings arrive byte for byte, the CLI gets exactly its two arguments, and nothing
    // in them ran.
    await mkdir(request.jobDirectory, { recursive: true });
    const scriptPath = join(workDirectory, 'job.sbatch');
    await writeFile(scriptPath, script);
    const bash = spawnSync('bash', [scriptPath], { encoding: 'utf8', cwd: workDirectory });
    expect(bash.status).toBe(0);
    expect(JSON.parse(bash.stdout)).toEqual(['run', request.spec.settingsPath]);
    expect(JSON.parse(await readFile(request.spec.settingsPath, 'utf8'))).toEqual(request.spec.settings);
    expect(request.spec.settings['outputDir']).toBe(join(workDirectory, hostile));
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a line break in an #SBATCH value instead of starting a new line of the script', () => {
    expect(() => directiveWord('--comment=a\nrm -rf /', '--slurm-arg')).toThrow(/--slurm-arg holds a line break or NUL/);
    expect(() => buildJobScript(jobRequestFor('node', { launcher: 'slurm', slurmArgs: ['--comment=a\n#SBATCH --x'] }, context).spec)).toThrow(/--slurm-arg/);
  });
});
