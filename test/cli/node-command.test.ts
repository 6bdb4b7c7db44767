import { createServer, type Server } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, pidFromLog, runCli, startCli } from '../helpers/cli.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-node-cli-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

function parseCsv(text: string): { header: string[]; rows: string[][] } {
  // The records written by these runs hold no quoted commas; a plain split is enough to check them.
  const [headerLine, ...lines] = text.trim().split(/\r?\n/);
  return { header: (headerLine as string).split(','), rows: lines.map((line) => line.split(',')) };
}

const LIFECYCLE_COLUMNS = [
  'scheduled_time', 'arrival_time', 'router_send_time', 'host', 'server_created_time', 'queue_time_start', 'queue_time_end',
  'server_first_token_time', 'first_token_time', 'finish_time', 'total_latency', 'server_latency', 'ttft', 'server_ttft',
  'queue_time_in_router', 'network_time', 'tokenize_time', 'pure_queue_time', 'queue_time_in_server', 'prefill_time',
  'decode_time', 'tpot', 'send_lag', 'intended_latency', 'input_length', 'expected_output_length', 'actual_prompt_tokens',
  'actual_output_tokens', 'cached_tokens', 'decode_length', 'prefix_group', 'session_id', 'dataset_index', 'success', 'error',
  'http_status', 'num_retractions',
];

describe('servelab node (simulated target)', () => {
  it('spreads 100 requests at 50 req/s over about 2 s and records every lifecycle column', async () => {
    const outputDir = join(workDirectory, 'first-users-case');
    const result = await runCli([
      'node', '--request-rate', '50', '--num-prompts', '100', '--random-input-len', '64', '--random-output-len', '16',
      '--profile', fastProfile, '--seed', '7', '--output-dir', outputDir, '--progress', 'lines',
    ]);
    expect(result.stderr).not.toMatch(/servelab: /);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(outputDir);
    const { header, rows } = parseCsv(await readFile(join(outputDir, 'requests.csv'), 'utf8'));
    for (const column of LIFECYCLE_COLUMNS) expect(header).toContain(column);
    expect(rows).toHaveLength(100);
    const column = (name: string): string[] => rows.map((row) => row[header.indexOf(name)] as string);
    const arrivals = column('arrival_time').map(Number);
    const spread = Math.max(...arrivals) - Math.min(...arrivals);
    // 99 exponential gaps of mean 20 ms: the spread is about 2 s (their first version spread them over 88 s).
    expect(spread).toBeGreaterThan(1.4);
    expect(spread).toBeLessThan(2.8);
    expect(column('success').every((value) => value === 'true' || value === '1' || value === 'True')).toBe(true);
    // Server timing keys came through: no empty cells in the server columns.
    for (const name of ['server_created_time', 'queue_time_end', 'server_first_token_time']) {
      expect(column(name).every((value) => value !== '')).toBe(true);
    }
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { run?: { status?: string } };
    expect(JSON.stringify(summary)).toContain('"completed"');
    const config = JSON.parse(await readFile(join(outputDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config.requestRate).toBe(50);
    const jsonlLines = (await readFile(join(outputDir, 'requests.jsonl'), 'utf8')).trim().split('\n');
    expect(jsonlLines).toHaveLength(100);
    const pid = pidFromLog(await readFile(join(outputDir, 'logs', 'sim-server.log'), 'utf8'));
    expect(isAlive(pid as number)).toBe(false);
  });

  it('on Ctrl-C stops, writes what it measured as interrupted, exits 130 and leaves no server running', async () => {
    const outputDir = join(workDirectory, 'interrupted');
    const run = startCli([
      'node', '--request-rate', '20', '--num-prompts', '2000', '--random-input-len', '64', '--random-output-len', '16',
      '--profile', fastProfile, '--output-dir', outputDir, '--progress', 'lines',
    ]);
    // Wait until requests are flowing, then interrupt as a user would.
    const deadline = Date.now() + 20_000;
    while (!/done/.test(run.stderr()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    run.child.kill('SIGINT');
    const { code } = await run.done;
    expect(code).toBe(130);
    const summaryText = await readFile(join(outputDir, 'summary.json'), 'utf8');
    expect(summaryText).toContain('"interrupted"');
    const { rows } = parseCsv(await readFile(join(outputDir, 'requests.csv'), 'utf8'));
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(2000);
    const pid = pidFromLog(await readFile(join(outputDir, 'logs', 'sim-server.log'), 'utf8'));
    expect(isAlive(pid as number)).toBe(false);
  });

  it('rejects invalid settings before starting anything, naming the option and what is allowed', async () => {
    const negative = await runCli(['node', '--request-rate', '-5', '--output-dir', join(workDirectory, 'never')]);
    expect(negative.code).toBe(2);
    expect(negative.stderr).toMatch(/--request-rate/);
    expect(negative.stderr).toMatch(/above 0|inf/);
    const notANumber = await runCli(['node', '--num-prompts', 'many']);
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toMatch(/--num-prompts/);
    const noUrl = await runCli(['node', '--target', 'attach']);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toMatch(/--url/);
    const badProfile = await runCli(['route', '--num-gpus', '2', '--profile', 'nosuch', '--output-dir', join(workDirectory, 'bad-profile')]);
    expect(badProfile.code).toBe(2);
    expect(badProfile.stderr).toMatch(/unknown profile "nosuch": use one of/);
    expect(badProfile.stderr).not.toMatch(/\n\s+at /);
    const unknownDataset = await runCli(['node', '--dataset-name', 'imagenet']);
    expect(unknownDataset.code).toBe(2);
    expect(unknownDataset.stderr).toMatch(/sharegpt/);
  });

  it('gives a one-line reason for an unreachable --url and for a port in use', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const busyPort = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const unreachable = await runCli(['node', '--target', 'attach', '--url', 'http://127.0.0.1:9', '--output-dir', join(workDirectory, 'unreachable')]);
      expect(unreachable.code).toBe(1);
      const reasons = unreachable.stderr.split('\n').filter((line) => line.startsWith('servelab:'));
      expect(reasons).toHaveLength(1);
      expect(unreachable.stderr).not.toMatch(/\n\s+at /);
      expect(unreachable.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
      const busy = await runCli(['node', '--port', String(busyPort), '--output-dir', join(workDirectory, 'busy')]);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(new RegExp(`port ${busyPort} .*already in use`));
      expect(busy.stderr).toMatch(/--port/);
    } finally {
      blocker.close();
    }
  });

  it('teaches with --help: every setting with its default', async () => {
    const help = await runCli(['node', '--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--request-rate', '--num-prompts', '--dataset-name', '--max-concurrency', '--target', '--warmup-requests', '--seed']) {
      expect(help.stdout).toContain(flag);
    }
    expect(help.stdout).toMatch(/default: 1000/);
  });
});
