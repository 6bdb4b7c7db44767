import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt, runCli } from '../helpers/cli.js';
import { expectPdPairs } from '../helpers/pd-pairs.js';
import { readRequestRows, type RequestRow } from '../helpers/requests-csv.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

/** A duration column of requests.csv, in seconds. */
function seconds(row: RequestRow, column: string): number {
  return Number(row[column]);
}

/** A PD request's phases before its first token: prefill queue and forward, the KV transfer, the decode queue. */
function phasesSeconds(row: RequestRow): number {
  return seconds(row, 'prefill_queue_time') + seconds(row, 'prefill_forward_time') + seconds(row, 'kv_transfer_time') + seconds(row, 'decode_queue_time');
}

beforeAll(async () => {
  assertCliBuilt();
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-pd-route-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('servelab route --pd-disaggregation', () => {
  it('runs a 1P1D routing test on the sim: every record names a prefill and a different decode server and a bootstrap room', async () => {
    const outputDir = join(workDirectory, 'pd-1p1d');
    const result = await runCli([
      'route', '--target', 'sim', '--pd-disaggregation', '--num-prefill', '1', '--num-decode', '1', '--routing-policy', 'round_robin',
      '--request-rate', '20', '--num-prompts', '12', '--random-input-len', '32', '--random-output-len', '8', '--profile', fastProfile,
      '--seed', '5', '--output-dir', outputDir, '--progress', 'off', '--kv-transfer-bandwidth', '200Gbit/s', '--kv-transfer-latency-ms', '1',
    ], { timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    const rows = await readRequestRows(outputDir);
    expect(rows).toHaveLength(12);
    expectPdPairs(rows);
    for (const row of rows) {
      expect(row['prefill_host']).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(row['decode_host']).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    }
    // The phases come from the simulated servers: every transfer took at least the link's 1 ms latency, and the
    // phases in a row fit inside its TTFT (the rest is the network and the router).
    for (const row of rows) {
      for (const name of ['prefill_queue_time', 'prefill_forward_time', 'kv_transfer_time', 'decode_queue_time', 'kv_transfer_wait_time']) expect(row[name], name).not.toBe('');
      expect(seconds(row, 'kv_transfer_time')).toBeGreaterThanOrEqual(0.001);
      expect(seconds(row, 'prefill_forward_time')).toBeGreaterThan(0);
      expect(phasesSeconds(row)).toBeLessThanOrEqual(seconds(row, 'ttft') + 0.001);
    }
    // What the sim still does not model is said in the run, not only in the docs.
    const summary = await readFile(join(outputDir, 'summary.json'), 'utf8');
    expect(result.stdout + summary).toContain("not modelled: the prefill server's KV held during its transfer");
    expect(summary).not.toContain('PD requests have phases');
  });

  it('runs a 2P2D routing test in virtual time with the same columns: pairs, rooms and the phases, which fit inside TTFT', async () => {
    const outputDir = join(workDirectory, 'pd-virtual');
    const result = await runCli([
      'route', '--target', 'sim', '--pd-disaggregation', '--num-prefill', '2', '--num-decode', '2', '--routing-policy', 'round_robin', '--virtual-time',
      '--request-rate', '20', '--num-prompts', '40', '--random-input-len', '256', '--random-output-len', '8', '--seed', '5',
      '--kv-transfer-bandwidth', '25GB/s', '--kv-transfer-latency-ms', '2', '--output-dir', outputDir, '--progress', 'off',
    ], { timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    const rows = await readRequestRows(outputDir);
    expect(rows).toHaveLength(40);
    expectPdPairs(rows);
    for (const row of rows) {
      expect(['node-0', 'node-1']).toContain(row['prefill_host']);
      expect(['node-2', 'node-3']).toContain(row['decode_host']);
      expect(seconds(row, 'kv_transfer_time')).toBeGreaterThanOrEqual(0.002);
      expect(phasesSeconds(row)).toBeLessThanOrEqual(seconds(row, 'ttft') + 1e-6);
    }
    expect(new Set(rows.map((row) => row['prefill_host'])).size).toBe(2);
    expect(await readFile(join(outputDir, 'summary.json'), 'utf8')).toContain('prefill/decode in virtual time');
  });

  it('counts prefill legs in flight in virtual time, so a load-aware prefill policy spreads over the prefill servers', async () => {
    // least_load picks the prefill server with the fewest legs in flight; with none counted it always took node-0.
    const outputDir = join(workDirectory, 'pd-virtual-least-load');
    const result = await runCli([
      'route', '--target', 'sim', '--pd-disaggregation', '--num-prefill', '2', '--num-decode', '1', '--prefill-policy', 'least_load', '--decode-policy', 'round_robin',
      '--virtual-time', '--request-rate', '40', '--num-prompts', '80', '--random-input-len', '512', '--random-output-len', '4', '--seed', '3',
      '--output-dir', outputDir, '--progress', 'off',
    ], { timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    const onFirst = (await readRequestRows(outputDir)).filter((row) => row['prefill_host'] === 'node-0').length;
    expect(onFirst).toBeGreaterThan(8);
    expect(onFirst).toBeLessThan(72);
  });

  it('refuses PD settings without --pd-disaggregation, and PD on a target it does not run yet, before starting anything', async () => {
    const stray = await runCli(['route', '--target', 'sim', '--num-prefill', '2', '--output-dir', join(workDirectory, 'stray')]);
    expect(stray.code).not.toBe(0);
    expect(stray.stderr).toContain('--num-prefill apply to prefill/decode disaggregation only; add --pd-disaggregation');
    const smg = await runCli(['route', '--target', 'sim', '--pd-disaggregation', '--router', 'nginx', '--output-dir', join(workDirectory, 'nginx')]);
    expect(smg.code).not.toBe(0);
    expect(smg.stderr).toContain('--pd-disaggregation needs a router that sends each request to a prefill and a decode server: --router builtin, smg or sglang-router, not nginx');
    const badPolicy = await runCli(['route', '--target', 'sim', '--pd-disaggregation', '--decode-policy', 'power-of-two', '--output-dir', join(workDirectory, 'bad-policy')]);
    expect(badPolicy.code).not.toBe(0);
    expect(badPolicy.stderr).toContain('power-of-two');
    expect(badPolicy.stderr).toContain('power_of_two');
    expect(existsSync(join(workDirectory, 'bad-policy', 'logs'))).toBe(false);
    const ambiguous = await runCli(['route', '--target', 'sim', '--pd-disaggregation', '--kv-transfer-bandwidth', '200Gb/s', '--output-dir', join(workDirectory, 'ambiguous')]);
    expect(ambiguous.code).not.toBe(0);
    expect(ambiguous.stderr).toContain('could mean bits or bytes: write it as e.g. 25GB/s (bytes) or 200Gbit/s (bits)');
    expect(existsSync(join(workDirectory, 'ambiguous', 'logs'))).toBe(false);
    const linkAlone = await runCli(['route', '--target', 'sim', '--kv-transfer-latency-ms', '2', '--output-dir', join(workDirectory, 'link-alone')]);
    expect(linkAlone.code).not.toBe(0);
    expect(linkAlone.stderr).toContain('--kv-transfer-latency-ms apply to prefill/decode disaggregation only');
  });

  it('compares a 1P1D run with a co-located run on 2 servers: a PD section on stdout and compare-pd.csv', async () => {
    const common = ['--routing-policy', 'round_robin', '--request-rate', '20', '--num-prompts', '8', '--random-input-len', '32', '--random-output-len', '8', '--profile', fastProfile, '--seed', '5', '--progress', 'off'];
    const pd = await runCli(['route', '--pd-disaggregation', '--output-dir', join(workDirectory, 'cmp-pd'), ...common], { timeoutMs: 120_000 });
    expect(pd.code, pd.stderr).toBe(0);
    const colocated = await runCli(['route', '--num-gpus', '2', '--output-dir', join(workDirectory, 'cmp-colocated'), ...common], { timeoutMs: 120_000 });
    expect(colocated.code, colocated.stderr).toBe(0);
    const compared = await runCli(['compare', join(workDirectory, 'cmp-colocated'), join(workDirectory, 'cmp-pd'), '--output-dir', join(workDirectory, 'cmp')]);
    expect(compared.code, compared.stderr).toBe(0);
    expect(compared.stdout).toContain('Prefill/decode phases');
    expect(compared.stdout).toMatch(/TTFT p50\s+[\d.]+\s+[\d.]+/);
    expect(compared.stdout).not.toContain('Caution');
    const csv = await readFile(join(workDirectory, 'cmp', 'compare-pd.csv'), 'utf8');
    expect(csv.split('\n').filter((line) => line !== '')).toHaveLength(1 + 12);
  }, 240_000);

  it('says that a node test cannot measure a pair, and which routing test does', async () => {
    const result = await runCli(['node', '--pd-disaggregation', '--output-dir', join(workDirectory, 'node-pd')]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('a prefill/decode pair needs a router to give each request a bootstrap room and send both legs');
    expect(result.stderr).toContain('servelab route --pd-disaggregation --num-prefill 1 --num-decode 1');
    expect(existsSync(join(workDirectory, 'node-pd', 'logs'))).toBe(false);
  });
});
