import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { isAlive, pidFromLog, runCli, startCli, type CliRun } from '../helpers/cli.js';
import { nginxMissing } from '../helpers/require-tool.js';

/**
 * Records first (issue 11): a run killed, a helper process killed, a full disk. Each run is spawned through the built
 * CLI as a user would run it; nothing is mocked. Processes are killed once requests.jsonl shows that the measured load
 * is under way (a count of finished records, never a time).
 */
const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-records-first-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

interface SummaryJson {
  provisional?: boolean;
  run: { status: string; t0EpochSeconds: number; runId: string };
  events: { kind: string; node?: number; detail?: string; timeSinceT0Seconds: number }[];
  notices?: { source: string; message: string; atSinceT0Seconds?: number }[];
  recovered?: { records: number; droppedLines: number; t0Known: boolean; missingFiles: string[] };
  metrics: unknown;
}

async function readSummary(directory: string): Promise<SummaryJson> {
  return JSON.parse(await readFile(join(directory, 'summary.json'), 'utf8')) as SummaryJson;
}

async function jsonlLines(directory: string): Promise<string[]> {
  const text = await readFile(join(directory, 'requests.jsonl'), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

/** Waits until the run has journaled at least `count` finished records (or it ended first). */
async function waitForRecords(run: CliRun, directory: string, count: number): Promise<void> {
  let ended = false;
  void run.done.then(() => (ended = true));
  for (let attempt = 0; attempt < 1200 && !ended; attempt++) {
    if ((await jsonlLines(directory)).length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the run did not journal ${count} records (stdout: ${run.stdout()}, stderr: ${run.stderr()})`);
}

async function pidOf(directory: string, log: string): Promise<number> {
  const pid = pidFromLog(await readFile(join(directory, 'logs', log), 'utf8'));
  if (pid === undefined) throw new Error(`no pid in ${log}`);
  return pid;
}

const routingArgs = (directory: string, prompts: number, extra: string[] = []): string[] => [
  'route', '--num-gpus', '2', '--request-rate', '40', '--num-prompts', String(prompts), '--random-input-len', '32',
  '--random-output-len', '16', '--profile', fastProfile, '--seed', '3', '--output-dir', directory, '--progress', 'off', ...extra,
];

describe('records first', () => {
  it('keeps every record finished before a SIGKILL of servelab, and `servelab report DIR` rebuilds the run from them', async () => {
    const directory = join(workDirectory, 'killed');
    const run = startCli(routingArgs(directory, 2000));
    await waitForRecords(run, directory, 25);
    run.child.kill('SIGKILL');
    await run.done;
    // What the killed run left: config.json, the journal, the provisional summary (its t0); nothing it launched.
    expect(existsSync(join(directory, 'config.json'))).toBe(true);
    expect(existsSync(join(directory, 'requests.csv'))).toBe(false);
    const provisional = await readSummary(directory);
    expect(provisional.provisional).toBe(true);
    expect(provisional.run.status).toBe('running');
    for (const log of ['node-0.log', 'node-1.log', 'router.log']) {
      const pid = await pidOf(directory, log);
      for (let attempt = 0; attempt < 100 && isAlive(pid); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(isAlive(pid), `${log}'s process outlived servelab`).toBe(false);
    }
    const whole = (await jsonlLines(directory)).filter((line) => line.endsWith('}'));
    expect(whole.length).toBeGreaterThanOrEqual(25);
    // A torn last line (as a kill mid-write leaves) and a writer's stale temporary file.
    await appendFile(join(directory, 'requests.jsonl'), '{"request_id":"torn","scheduled_ti');
    await writeFile(join(directory, '.requests.csv.0123456789ab.tmp'), 'half a table');

    const withoutSummary = join(workDirectory, 'killed-only-config-and-records');
    await cp(directory, withoutSummary, { recursive: true });
    await rm(join(withoutSummary, 'summary.json'));

    const report = await runCli(['report', directory]);
    expect(report.stderr).toBe('');
    expect(report.code).toBe(0);
    expect(report.stdout).toContain(`recovered: ${whole.length} records read back from requests.jsonl (1 torn line dropped)`);
    expect(report.stdout).toContain('removed 1 temporary file(s)');
    expect((await readdir(directory)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const rebuilt = await readSummary(directory);
    expect(rebuilt.provisional).toBeUndefined();
    expect(rebuilt.run.status).toBe('interrupted');
    expect(rebuilt.run.t0EpochSeconds).toBe(provisional.run.t0EpochSeconds);
    expect(rebuilt.recovered).toMatchObject({ records: whole.length, droppedLines: 1, t0Known: true });
    expect(rebuilt.recovered?.missingFiles).toContain('requests.csv');
    const csvRows = (await readFile(join(directory, 'requests.csv'), 'utf8')).trim().split('\n');
    expect(csvRows).toHaveLength(whole.length + 1);
    const journaledIds = whole.map((line) => (JSON.parse(line) as { request_id: string }).request_id).sort();
    const rebuiltIds = (await jsonlLines(directory)).map((line) => (JSON.parse(line) as { request_id: string }).request_id).sort();
    expect(rebuiltIds).toEqual(journaledIds);
    expect(await readFile(join(directory, 'report.html'), 'utf8')).toContain('Recovered: ');

    // With only config.json and requests.jsonl, the run is still rebuilt; its t0's wall-clock instant is unknown.
    const bare = await runCli(['report', withoutSummary, '--quiet']);
    expect(bare.code).toBe(0);
    const bareSummary = await readSummary(withoutSummary);
    expect(bareSummary.recovered).toMatchObject({ records: whole.length, droppedLines: 1, t0Known: false });
    expect(bareSummary.run.runId).toBe(provisional.run.runId);
    expect((await readFile(join(withoutSummary, 'requests.csv'), 'utf8')).trim().split('\n')).toHaveLength(whole.length + 1);

    // Rebuilt once, the directory is complete: a second report rewrites every file bit for bit.
    const again = join(workDirectory, 'killed-again');
    await cp(directory, again, { recursive: true });
    expect((await runCli(['report', again, '--quiet'])).code).toBe(0);
    for (const file of ['summary.json', 'requests.csv', 'requests.jsonl', 'timeseries.csv', 'report.html']) {
      expect(await readFile(join(again, file), 'utf8'), file).toBe(await readFile(join(directory, file), 'utf8'));
    }
  }, 120_000);

  const noNginx = nginxMissing();
  it.skipIf(noNginx !== undefined)(`keeps every record when the taps process dies mid-run: client columns complete, an event and a notice${noNginx === undefined ? '' : ` (skipped: ${noNginx})`}`, async () => {
    const directory = join(workDirectory, 'taps-killed');
    // Taps stand only in front of routers servelab does not own: here nginx (the builtin router traces itself).
    const run = startCli(routingArgs(directory, 240, ['--router', 'nginx', '--routing-policy', 'round_robin']));
    await waitForRecords(run, directory, 20);
    process.kill(await pidOf(directory, 'taps.log'), 'SIGKILL');
    const { code } = await run.done;
    expect(run.stderr()).toBe('');
    expect(code).toBe(0);
    const records = (await jsonlLines(directory)).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toHaveLength(240);
    expect(records.every((record) => typeof record.scheduled_time === 'number' && typeof record.finish_time === 'number')).toBe(true);
    // The taps took their records with them: where the router sent each request is unknown, never guessed.
    expect(records.every((record) => record.host === undefined)).toBe(true);
    const summary = await readSummary(directory);
    expect(summary.run.status).toBe('completed');
    expect(summary.events.filter((event) => event.kind === 'process_exit').map((event) => event.detail)).toEqual(['taps was killed by SIGKILL']);
    expect(summary.notices?.map((notice) => notice.source)).toEqual(['process:taps', 'taps']);
    expect(run.stdout()).toMatch(/Notice \(process:taps at [\d.]+ s\): taps was killed by SIGKILL/);
    expect(await readFile(join(directory, 'report.html'), 'utf8')).toContain('<h2>Notices</h2>');
  }, 120_000);

  it('records the death of one server as an event on its node; the run goes on and its requests are recorded', async () => {
    const directory = join(workDirectory, 'server-killed');
    const run = startCli(routingArgs(directory, 240, ['--routing-policy', 'round_robin']));
    await waitForRecords(run, directory, 20);
    process.kill(await pidOf(directory, 'node-1.log'), 'SIGKILL');
    const { code } = await run.done;
    expect(code).toBe(0);
    expect(await jsonlLines(directory)).toHaveLength(240);
    const summary = await readSummary(directory);
    expect(summary.run.status).toBe('completed');
    const deaths = summary.events.filter((event) => event.kind === 'process_exit');
    expect(deaths).toEqual([expect.objectContaining({ node: 1, detail: 'node-1 was killed by SIGKILL' })]);
    expect(deaths[0]?.timeSinceT0Seconds).toBeGreaterThan(0);
    expect(summary.notices?.some((notice) => notice.source === 'process:node-1')).toBe(true);
  }, 120_000);

  it('stops early when the router dies and onProcessExit is stop: every request sent has its record, exit 0', async () => {
    const directory = join(workDirectory, 'router-killed');
    const run = startCli(routingArgs(directory, 2000, ['--on-process-exit', 'stop']));
    await waitForRecords(run, directory, 20);
    process.kill(await pidOf(directory, 'router.log'), 'SIGKILL');
    const { code } = await run.done;
    expect(run.stderr()).toBe('');
    expect(code).toBe(0);
    const summary = await readSummary(directory);
    expect(summary.run.status).toBe('interrupted');
    expect(summary.events.map((event) => event.kind)).toContain('process_exit');
    expect(summary.notices?.find((notice) => notice.source === 'process:router')?.message).toContain('the run stopped early (onProcessExit: stop)');
    const records = (await jsonlLines(directory)).map((line) => JSON.parse(line) as { request_id: string; success: boolean });
    // Stopped early: fewer than the 2,000 planned, but every one sent is there, numbered without a gap.
    expect(records.length).toBeGreaterThanOrEqual(20);
    expect(records.length).toBeLessThan(2000);
    const indices = records.map((record) => Number(record.request_id.split('-').pop())).sort((a, b) => a - b);
    expect(indices).toEqual(indices.map((_, index) => index));
  }, 120_000);
});

describe('a full disk', () => {
  /** Runs `body` on a 256 KiB tmpfs (unmounted after), or skips the test with one line where none can be mounted. */
  async function onSmallDisk(context: TestContext, name: string, body: (mountPoint: string) => Promise<void>): Promise<void> {
    const mountPoint = join(workDirectory, name);
    await mkdir(mountPoint, { recursive: true });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mountPoint], { stdio: 'ignore' });
    } catch {
      console.warn('skipped: cannot mount a small tmpfs here (needs root and CAP_SYS_ADMIN) to fill a disk');
      context.skip();
      return;
    }
    try {
      await body(mountPoint);
    } finally {
      execFileSync('umount', [mountPoint], { stdio: 'ignore' });
    }
  }

  it('ends the run with one line naming the file, keeps the records that fit, and leaves no temporary file', async (context) => {
    await onSmallDisk(context, 'small-disk', async (mountPoint) => {
      const directory = join(mountPoint, 'run');
      const result = await runCli([
        'node', '--request-rate', '100', '--num-prompts', '400', '--random-input-len', '32', '--random-output-len', '64',
        '--profile', fastProfile, '--output-dir', directory, '--progress', 'off', '--quiet',
      ]);
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^servelab: the disk is full: could not write ${join(directory, 'requests.jsonl')}; .* \\(\\d+ of 400 records reached it\\)$`));
      const whole = (await jsonlLines(directory)).filter((line) => line.endsWith('}'));
      expect(whole.length).toBeGreaterThan(0);
      for (const line of whole) expect(() => JSON.parse(line) as unknown).not.toThrow();
      expect((await readdir(directory)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
      // No torn last line: the journal cut a write that stopped part way back to its last whole line.
      expect(await readFile(join(directory, 'requests.jsonl'), 'utf8')).toMatch(/\n$/);
      // The count the message gives is the count on disk.
      const said = Number(/\((\d+) of 400 records reached it\)/.exec(lines[0] as string)?.[1]);
      expect(said).toBe(whole.length);
    });
  }, 120_000);

  it('still prints the terminal summary from memory before the line about the disk', async (context) => {
    await onSmallDisk(context, 'small-disk-summary', async (mountPoint) => {
      const directory = join(mountPoint, 'run');
      const result = await runCli([
        'node', '--request-rate', '100', '--num-prompts', '400', '--random-input-len', '32', '--random-output-len', '64',
        '--profile', fastProfile, '--output-dir', directory, '--progress', 'off',
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^servelab: the disk is full/);
      // Every request was measured: the summary counts all 400.
      expect(result.stdout).toMatch(/STABLE|SATURATED/);
      expect(result.stdout).toMatch(/400/);
    });
  }, 120_000);
});
