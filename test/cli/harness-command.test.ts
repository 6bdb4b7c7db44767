import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-harness-cli-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const RUN = ['node', '--request-rate', '50', '--num-prompts', '60', '--random-input-len', '64', '--random-output-len', '16', '--profile', fastProfile, '--seed', '7', '--progress', 'off'];

/** `metrics.harness` as summary.json (format 2) names it: the fields these tests read. */
interface HarnessBlock {
  state: string;
  warnings: { process: string; node?: string; problem: string }[];
  stagesFlagged: Record<string, string[]>;
  nodesFlagged: Record<string, string[]>;
  processes: {
    name: string;
    role: string;
    node?: string;
    eventLoopDelayMs: { samples: number } | null;
    sendLagP99Ms?: number;
    stepLatenessMs?: { steps: number };
  }[];
  missing: string[];
}

async function harnessOf(outputDir: string): Promise<HarnessBlock | undefined> {
  const file = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { metrics: { harness?: HarnessBlock } };
  return file.metrics.harness;
}

describe('servelab node watches its own client, its simulated server and the host', () => {
  it('a run whose client was deliberately slowed (its event loop blocked 30 ms in every 40) is flagged, naming the client', async () => {
    const outputDir = join(workDirectory, 'slowed');
    const result = await runCli([...RUN, '--output-dir', outputDir], { env: { SERVELAB_INJECT_BUSY_LOOP: 'client:30/40' } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\nHarness: +SUSPECT: error bound over 5% of [^;]*\bttft \([\d.]+%\)[^;]*; TTFT or E2E among them \(watched: client, sim-server, host CPU\)\n/);
    expect(result.stdout).toMatch(/\n {2}client: event-loop delay p99 [\d.]+ ms > 1 ms/);
    expect(result.stdout).not.toContain('not checked (no self-report yet)');
    const harness = await harnessOf(outputDir);
    expect(harness?.state).toBe('suspect');
    expect(harness?.warnings.some((warning) => warning.process === 'client' && /event-loop delay/.test(warning.problem))).toBe(true);
    expect(harness?.stagesFlagged['ttft']).toContain('client');
  });

  it('a run left alone measures its client, its simulated server and the host, under the verdict and above the status', async () => {
    const outputDir = join(workDirectory, 'alone');
    const result = await runCli([...RUN, '--output-dir', outputDir]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    const heading = lines.findIndex((line) => line.includes('servelab node test'));
    // The verdict of a real-time run on a shared machine is not asserted here (test/cli/verdict-command.test.ts does,
    // in virtual time): only that it comes first.
    expect(lines[heading + 1]).toMatch(/^Verdict: +(STABLE|SATURATED|UNKNOWN)$/);
    expect(lines.findIndex((line) => line.startsWith('Harness:'))).toBeLessThan(lines.findIndex((line) => line.startsWith('Status:')));
    const harness = await harnessOf(outputDir);
    const client = harness?.processes.find((process) => process.name === 'client');
    expect(client?.eventLoopDelayMs?.samples ?? 0).toBeGreaterThan(0);
    expect(client?.sendLagP99Ms).toBeDefined();
    // This machine is shared: whether the host or the client crossed a threshold here is not for this test to decide.
    expect(harness?.missing).toEqual([]);
    const server = harness?.processes.find((process) => process.name === 'sim-server');
    expect(server?.stepLatenessMs?.steps ?? 0).toBeGreaterThan(0);
    expect(server?.node).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a run whose simulated server was deliberately slowed is flagged, naming the server, its node and its stages', async () => {
    const outputDir = join(workDirectory, 'slowed-server');
    const result = await runCli([...RUN, '--output-dir', outputDir], { env: { SERVELAB_INJECT_BUSY_LOOP: 'sim-server:30/40' } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\n {2}sim-server \(http:\/\/127\.0\.0\.1:\d+\): engine steps ran late against the model: p99 [\d.]+ ms > 1 ms/);
    const harness = await harnessOf(outputDir);
    const warning = harness?.warnings.find((candidate) => candidate.process === 'sim-server');
    expect(warning?.node).toBe(harness?.processes.find((process) => process.name === 'sim-server')?.node);
    expect(harness?.stagesFlagged['prefill_time']).toContain('sim-server');
  });

  it('a routing run whose builtin router (the relay) was deliberately slowed is flagged, naming the router, its stages and every node', async () => {
    const outputDir = join(workDirectory, 'slowed-router');
    const result = await runCli(
      ['route', '--num-gpus', '2', ...RUN.slice(1), '--output-dir', outputDir],
      { env: { SERVELAB_INJECT_BUSY_LOOP: 'router:30/40' } },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\nHarness: +SUSPECT: error bound over 5% of [^;]*\bqueue_time_in_router \([\d.]+%\)[^;]*; TTFT or E2E among them \(watched: client, router, node-0, node-1, host CPU\)\n/);
    expect(result.stdout).toMatch(/\n {2}router: event-loop delay p99 [\d.]+ ms > 1 ms/);
    // The builtin router traces itself, so no taps run: every process of the run reports on itself.
    expect(result.stdout).not.toContain('not checked (no self-report yet)');
    const harness = await harnessOf(outputDir);
    expect(harness?.warnings.some((warning) => warning.process === 'router' && /event-loop delay/.test(warning.problem))).toBe(true);
    expect(harness?.stagesFlagged['queue_time_in_router']).toContain('router');
    const nodes = harness?.processes.filter((process) => process.role === 'sim-server').map((process) => process.node as string) ?? [];
    expect(nodes).toHaveLength(2);
    for (const node of nodes) expect(harness?.nodesFlagged[node]).toContain('router');
  });
});
