import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { predictFromTable } from '../../src/engine/calibration/measured-table-fit.js';
import type { StepObservation } from '../../src/engine/calibration/fit-profile.js';
import type { MeasuredProfile } from '../../src/types/engine.js';
import { runCli } from '../helpers/cli.js';

// Written by `servelab calibrate --measurements-output` on 2026-11-23 against transformers 5.17's continuous batching
// (random Llama-3-8B shape, one H100; bench/real-engine/results/2026-11-23-full-graph-warmup): 30 steps, 8 of them mixed.
const FIXTURE = new URL('../fixtures/calibration/transformers-cb-h100-20261123-measurements.json', import.meta.url).pathname;

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-refit-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('servelab calibrate --from-measurements', () => {
  it('fits both profiles again from a measurements file, without a server', async () => {
    const roofline = join(workDirectory, 'roofline.json');
    const measured = join(workDirectory, 'measured.json');
    const result = await runCli(['calibrate', '--from-measurements', FIXTURE, '--output', roofline, '--measured-output', measured]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/mixed steps: 8 measured; the roofline profile is off by [\d.]+% RMS on them, the measured table by [\d.]+% RMS/);
    // Two of its full-batch mixed points had a stalled repeat (187 ms against 122, 311 against 154): said, not hidden,
    // on the terminal and in both profiles' derivations.
    expect(result.stdout).toMatch(/slow repeats: 2 points had a repeat at least 1\.3x the figure kept \(prefill 256 tokens beside a decode batch of 63 at 532 KV tokens: 187\.2 against 122\.4 ms; prefill 961 tokens .*: 311\.0 against 154\.4 ms\)/);
    const measuredProfile = JSON.parse(readFileSync(measured, 'utf8')) as MeasuredProfile;
    expect(measuredProfile.derivation.join(' ')).toMatch(/Slow repeats: 2 points had a repeat/);
    expect(readFileSync(roofline, 'utf8')).toMatch(/Slow repeats: 2 points had a repeat/);
    // A file from before the concurrency sweep's lengths were recorded: the derivation names none.
    expect(readFileSync(roofline, 'utf8')).toContain('B requests at once at several prompt lengths');
    const table = measuredProfile.table;
    const observations = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { observations: StepObservation[] }).observations;
    // The table passes through the mixed steps it was built from: the engine's dear full-batch mixed steps included.
    for (const observation of observations.filter((o) => o.kind === 'mixed')) {
      expect(Math.abs(predictFromTable(table, observation) - observation.stepMs) / observation.stepMs, observation.label).toBeLessThan(0.01);
    }
    expect(JSON.parse(readFileSync(roofline, 'utf8')).description).toContain('transformers-cb-h100-20261123-measurements.json');
  });

  it('needs exactly one of --url and --from-measurements, and refuses a file that is not one', async () => {
    const neither = await runCli(['calibrate', '--output', join(workDirectory, 'x.json')]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('exactly one of --url URL');
    const broken = join(workDirectory, 'broken.json');
    writeFileSync(broken, JSON.stringify({ limits: { maxRunningRequests: 8, chunkedPrefillSize: 512, contextLength: 4096, maxTotalTokens: 9000 }, observations: [{ kind: 'mixed', size: 4, secondary: 100, stepMs: 3 }] }));
    const refused = await runCli(['calibrate', '--from-measurements', broken, '--output', join(workDirectory, 'y.json')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('observation 1 is a mixed step without "prefillTokens"');
    expect(refused.stderr).toContain('--measurements-output FILE');
    const badLengths = await runCli(['calibrate', '--url', 'http://127.0.0.1:9', '--output', join(workDirectory, 'z.json'), '--kv-prompt-lengths', '32,,abc']);
    expect(badLengths.code).toBe(2);
    expect(badLengths.stderr).toContain('--kv-prompt-lengths must be whole token counts >= 1 separated by commas');
    for (const loads of ['0.2,,0.8', '0', '0.5,2']) {
      const badLoads = await runCli(['calibrate', '--url', 'http://127.0.0.1:9', '--output', join(workDirectory, 'w.json'), '--validation-loads', loads]);
      expect(badLoads.code, loads).toBe(2);
      expect(badLoads.stderr).toContain(`--validation-loads must be shares of the predicted capacity above 0 and at most 1.5, separated by commas (e.g. 0.2,0.5,0.8,0.95), got "${loads}"`);
    }
  });
});
