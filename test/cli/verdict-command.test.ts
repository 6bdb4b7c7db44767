import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-verdict-cli-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

// One simulated Llama-3-8B/H100 server with at most 8 running requests serves about 5 req/s of these requests.
const OVERLOADED = [
  'node', '--virtual-time', '--num-prompts', '200', '--random-input-len', '512', '--random-output-len', '256', '--random-range-ratio', '1',
  '--max-running-requests', '8', '--profile', 'llama-3-8b-h100', '--seed', '3', '--warmup-requests', '0', '--progress', 'off',
];

interface VerdictFile {
  run: { status: string };
  metrics: { verdict: { state: string; evidence: { offeredRatePerSecond: number | null; servedRatePerSecond: number | null } | null } };
}

/** The lines of the terminal summary from its heading on. */
function summaryLines(stdout: string): string[] {
  const lines = stdout.split('\n');
  return lines.slice(lines.findIndex((line) => line.includes('servelab node test')));
}

describe('servelab node says SATURATED first when the load outruns the server', () => {
  it('an overloaded virtual-time run (50 req/s offered) completes, and its verdict says saturated above its status', async () => {
    const outputDir = join(workDirectory, 'overloaded');
    const result = await runCli([...OVERLOADED, '--request-rate', '50', '--output-dir', outputDir]);
    expect(result.code).toBe(0);
    const lines = summaryLines(result.stdout);
    expect(lines[1]).toMatch(/^Verdict: +SATURATED$/);
    expect(lines[2]).toMatch(/arrivals outran completions: offered [\d.]+ req\/s, completed [\d.]+ req\/s/);
    expect(lines.findIndex((line) => line.startsWith('Status:'))).toBeGreaterThan(1);
    const file = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as VerdictFile;
    expect(file.run.status).toBe('completed');
    expect(Object.keys(file.metrics)[0]).toBe('verdict');
    expect(file.metrics.verdict.state).toBe('saturated');
    const evidence = file.metrics.verdict.evidence;
    expect(evidence?.offeredRatePerSecond ?? 0).toBeGreaterThan(2 * (evidence?.servedRatePerSecond ?? Infinity));
    const html = await readFile(join(outputDir, 'report.html'), 'utf8');
    expect(html).toContain('<h2>Verdict: SATURATED</h2>');
    expect(html.indexOf('<h2>Verdict: SATURATED</h2>')).toBeLessThan(html.indexOf('<h2>Overview</h2>'));
  });

  it('an infinite-rate run is saturated, and says its requests were offered at once', async () => {
    const outputDir = join(workDirectory, 'infinite');
    const result = await runCli([...OVERLOADED, '--request-rate', 'inf', '--output-dir', outputDir]);
    expect(result.code).toBe(0);
    const lines = summaryLines(result.stdout);
    expect(lines[1]).toMatch(/^Verdict: +SATURATED$/);
    expect(lines[2]).toMatch(/offered at once/);
    const file = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as VerdictFile;
    expect(file.metrics.verdict.state).toBe('saturated');
  });
});
