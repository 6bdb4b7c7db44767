import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RooflineProfile } from '../../src/types/engine.js';
import { runCli } from '../helpers/cli.js';

// The "real" server here is the simulated engine with the built-in profile, run in virtual time (exact server stamps,
// no timing noise); the profile to refit has every coefficient wrong by 1.5 to 4 times.
const SERVER = ['--target', 'sim', '--virtual-time', '--profile', 'llama-3-8b-h100', '--max-running-requests', '16', '--chunked-prefill-size', '512', '--max-total-tokens', '20000'];
const WORKLOAD = ['--dataset-name', 'random-ids', '--random-input-len', '400', '--random-range-ratio', '0.3', '--random-output-len', '40', '--progress', 'off', '--quiet'];
const WRONG: RooflineProfile = {
  kind: 'roofline',
  name: 'wrong',
  description: 'the built-in llama-3-8b-h100 with every coefficient off',
  model: 'test',
  hardware: 'none',
  derivation: [],
  coefficients: { stepOverheadMs: 2, weightsFloorMs: 10, prefillPerTokenMs: 0.08, prefillAttentionPerPairMs: 2e-7, decodePerSequenceMs: 0.1, kvReadPerTokenMs: 0.0003 },
  maxTotalTokens: 20000,
  contextLength: 8192,
  // What calibrate writes into a profile it made: both describe these (wrong) coefficients, not a refit's.
  stepError: { fitRmsPercent: 1, fitMaxPercent: 2, heldOutRmsPercent: 3, heldOutMaxPercent: 4, heldOutSteps: 10 },
  validation: { description: 'calibrate validation of the wrong coefficients', rates: [], worstErrorPercent: 1, rmsErrorPercent: 1 },
};

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-from-runs-'));
  // Capacity is about 54 req/s: runs at 28%, 56% and (held out) 83% of it.
  for (const rate of [15, 30, 45]) {
    const run = await runCli(['node', ...SERVER, ...WORKLOAD, '--request-rate', String(rate), '--num-prompts', '200', '--seed', String(rate), '--output-dir', join(workDirectory, `rate-${rate}`)]);
    expect(run.code, run.stderr).toBe(0);
  }
  writeFileSync(join(workDirectory, 'wrong.json'), JSON.stringify(WRONG));
}, 120_000);
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

/** The held-out metric lines: name -> [start error %, refit error %]. */
function heldOutErrors(stdout: string): Map<string, [number, number]> {
  const errors = new Map<string, [number, number]>();
  for (const match of stdout.matchAll(/^ {4}(\S+(?: p\d0)?) +[\d.]+ \/ [\d.]+ \(([+-][\d.]+)%\) \/ [\d.]+ \(([+-][\d.]+)%\)/gm)) {
    errors.set(match[1] as string, [Number(match[2]), Number(match[3])]);
  }
  return errors;
}

describe('servelab calibrate --from-runs', () => {
  it('refits a deliberately wrong profile from the records, and its error on the held-out run drops', async () => {
    const output = join(workDirectory, 'refit.json');
    const runs = [15, 30, 45].map((rate) => join(workDirectory, `rate-${rate}`));
    const result = await runCli(['calibrate', '--from-runs', ...runs, '--profile', join(workDirectory, 'wrong.json'), '--output', output]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`held out ${runs[2]} (200 requests, not fitted)`);
    expect(result.stdout).toContain('prefill steps apart from decode steps fits best');
    expect(result.stdout).toMatch(/fitted runs, worst server-side error of the refit \(in sample\): \S+rate-15 [+-][\d.]+% \([A-Za-z0-9 ]+\); \S+rate-30 /);
    const errors = heldOutErrors(result.stdout);
    expect([...errors.keys()]).toEqual(['throughput', 'TTFT p50', 'TTFT p90', 'TPOT p50', 'E2E p50', 'E2E p90']);
    for (const [metric, [start, refit]] of errors) {
      expect(Math.abs(refit), `${metric}: ${result.stdout}`).toBeLessThan(5);
      expect(Math.abs(refit), metric).toBeLessThan(Math.abs(start));
    }
    expect(Math.abs((errors.get('TTFT p50') as [number, number])[0])).toBeGreaterThan(100);
    const [before, after] = /([\d.]+) before, ([\d.]+) after/.exec(result.stdout)?.slice(1).map(Number) ?? [];
    expect(after as number).toBeLessThan((before as number) / 100);
    const refit = JSON.parse(readFileSync(output, 'utf8')) as RooflineProfile;
    expect(refit.kind).toBe('roofline');
    expect(refit.derivation.join(' ')).toContain('Refit by calibrate --from-runs');
    // The start profile's validation and step error were of its own coefficients: a refit does not carry them.
    expect(refit.validation).toBeUndefined();
    expect(refit.stepError).toBeUndefined();
    expect(refit.derivation.join(' ')).toContain("The start profile's end-to-end validation and held-out step error are not carried over");
    // The records carry the serving path of the run (the built-in profile's direct path: 0.62 ms network).
    expect(refit.servingLatency?.networkMs).toBeCloseTo(0.62, 2);
  });

  it('fits from no profile at all: a roofline read off the records, which the replay then brings closer on the held-out run', async () => {
    const runs = [15, 30, 45].map((rate) => join(workDirectory, `rate-${rate}`));
    const result = await runCli(['calibrate', '--from-runs', ...runs, '--output', join(workDirectory, 'scratch.json'), '--quiet']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('started from a roofline fitted to the step times the records show');
    const errors = [...heldOutErrors(result.stdout).values()];
    expect(errors).toHaveLength(6);
    const worst = (which: 0 | 1): number => Math.max(...errors.map((pair) => Math.abs(pair[which])));
    expect(worst(1)).toBeLessThan(worst(0));
    expect(worst(1)).toBeLessThan(25);
  });

  it("refuses runs against an attached server without the server's limits, naming the flags", async () => {
    const run = join(workDirectory, 'attached');
    mkdirSync(run);
    writeFileSync(join(run, 'config.json'), JSON.stringify({ test: 'node', target: 'attach' }));
    const record = { success: true, queue_time_start: 0.01, queue_time_end: 0.01, server_first_token_time: 0.02, server_finish_time: 0.1, actual_prompt_tokens: 100, actual_output_tokens: 10 };
    writeFileSync(join(run, 'requests.jsonl'), `${JSON.stringify(record)}\n`);
    const refused = await runCli(['calibrate', '--from-runs', run, '--output', join(workDirectory, 'x.json'), '--max-running-requests', '8']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pass --chunked-prefill-size N --max-total-tokens N');
    const both = await runCli(['calibrate', '--from-runs', run, '--url', 'http://127.0.0.1:9', '--output', join(workDirectory, 'y.json')]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('exactly one of --url URL');
  });
});
