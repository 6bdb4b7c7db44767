import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, pidFromLog, runCli, startCli } from '../helpers/cli.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-client-nodes-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

interface GeneratorReport {
  name: string;
  requests: number;
  recordsReceived: number;
  recordsLost: number;
  clock: { offsetMs: number | null; uncertaintyMs: number | null; exchanges: number };
}

async function generatorPids(outputDir: string, count: number): Promise<number[]> {
  const pids: number[] = [];
  for (let index = 0; index < count; index++) {
    pids.push(pidFromLog(await readFile(join(outputDir, 'logs', `load-generator-${index}.log`), 'utf8')) as number);
  }
  return pids;
}

describe('servelab node --client-nodes', () => {
  it('sends the one schedule from two load-generator processes: every record written, their clocks in summary.json, none left running', async () => {
    const outputDir = join(workDirectory, 'two');
    const run = await runCli([
      'node', '--client-nodes', '2', '--request-rate', '40', '--num-prompts', '40', '--random-input-len', '16', '--random-output-len', '4',
      '--profile', fastProfile, '--output-dir', outputDir,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const lines = (await readFile(join(outputDir, 'requests.jsonl'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(40);
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { extras?: { loadGenerators?: GeneratorReport[] } };
    const generators = summary.extras?.loadGenerators ?? [];
    expect(generators.map((generator) => [generator.name, generator.requests, generator.recordsReceived, generator.recordsLost])).toEqual([
      ['load-generator 0', 20, 20, 0],
      ['load-generator 1', 20, 20, 0],
    ]);
    for (const generator of generators) {
      expect(generator.clock.exchanges).toBeGreaterThanOrEqual(16);
      expect(generator.clock.uncertaintyMs).toBeGreaterThanOrEqual(0);
    }
    for (const pid of await generatorPids(outputDir, 2)) expect(isAlive(pid)).toBe(false);
  });

  it('on Ctrl-C ends every load-generator process, writes what was measured as interrupted and exits 130', async () => {
    const outputDir = join(workDirectory, 'interrupted');
    const run = startCli([
      'node', '--client-nodes', '2', '--request-rate', '20', '--num-prompts', '2000', '--random-input-len', '16', '--random-output-len', '4',
      '--profile', fastProfile, '--output-dir', outputDir, '--progress', 'lines',
    ]);
    // Wait until records are being written, then interrupt as a user would.
    const deadline = Date.now() + 30_000;
    const recordsWritten = async (): Promise<number> => (await readFile(join(outputDir, 'requests.jsonl'), 'utf8').catch(() => '')).split('\n').length - 1;
    while ((await recordsWritten()) < 10 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const pids = await generatorPids(outputDir, 2);
    expect(pids.every((pid) => isAlive(pid))).toBe(true);
    run.child.kill('SIGINT');
    const { code } = await run.done;
    expect(code, run.stderr()).toBe(130);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(await readFile(join(outputDir, 'summary.json'), 'utf8')).toContain('"interrupted"');
    const lines = (await readFile(join(outputDir, 'requests.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(10);
    expect(lines.length).toBeLessThan(2000);
  });

  it('a load generator killed mid-run is an event and a notice, its unfinished requests aborted records; the run completes', async () => {
    const outputDir = join(workDirectory, 'killed');
    const run = startCli([
      'node', '--client-nodes', '2', '--request-rate', '30', '--num-prompts', '120', '--random-input-len', '16', '--random-output-len', '4',
      '--profile', fastProfile, '--output-dir', outputDir, '--progress', 'lines',
    ]);
    const deadline = Date.now() + 30_000;
    const recordsWritten = async (): Promise<number> => (await readFile(join(outputDir, 'requests.jsonl'), 'utf8').catch(() => '')).split('\n').length - 1;
    while ((await recordsWritten()) < 10 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const [, victim] = await generatorPids(outputDir, 2);
    process.kill(victim as number, 'SIGKILL');
    const { code } = await run.done;
    expect(code, run.stderr()).toBe(0);
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as {
      run: { status: string };
      events: { kind: string; detail?: string }[];
      notices?: { source: string; message: string }[];
      extras?: { loadGenerators?: GeneratorReport[] };
    };
    expect(summary.run.status).toBe('completed');
    expect(summary.events.filter((event) => event.kind === 'process_exit').map((event) => event.detail)).toEqual([
      expect.stringMatching(/^load-generator 1 was killed by SIGKILL before it finished its slice/),
    ]);
    expect(summary.notices?.map((notice) => notice.source)).toContain('process:load-generator 1');
    const records = (await readFile(join(outputDir, 'requests.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { request_id?: string; error?: string; success?: boolean });
    expect(records).toHaveLength(120);
    const lost = summary.extras?.loadGenerators?.[1]?.recordsLost ?? 0;
    expect(lost).toBeGreaterThan(0);
    expect(records.filter((record) => record.error === 'aborted')).toHaveLength(lost);
  });

  it('servelab route sends through the router from two load generators: every record written, each with its server', async () => {
    const outputDir = join(workDirectory, 'route');
    const run = await runCli([
      'route', '--num-gpus', '2', '--client-nodes', '2', '--request-rate', '40', '--num-prompts', '40', '--random-input-len', '16',
      '--random-output-len', '4', '--profile', fastProfile, '--output-dir', outputDir,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const records = (await readFile(join(outputDir, 'requests.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { success?: boolean; host?: string });
    expect(records).toHaveLength(40);
    expect(records.every((record) => record.success === true && record.host !== undefined)).toBe(true);
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { extras?: { loadGenerators?: GeneratorReport[] } };
    expect(summary.extras?.loadGenerators?.map((generator) => generator.recordsReceived)).toEqual([20, 20]);
  });

  it('refuses --client-nodes with a closed loop before starting anything', async () => {
    const refused = await runCli(['node', '--client-nodes', '2', '--concurrency', '4', '--output-dir', join(workDirectory, 'never')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--client-nodes spreads an open loop/);
  });
});
