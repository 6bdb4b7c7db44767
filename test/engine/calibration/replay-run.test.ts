import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayMetrics, replayObjective } from '../../../src/engine/calibration/replay-error.js';
import { refitFromRuns } from '../../../src/engine/calibration/refit-from-runs.js';
import { replayRun } from '../../../src/engine/calibration/replay-run.js';
import { readRecordedRun, type RecordedRun } from '../../../src/engine/calibration/run-records.js';
import { loadProfile } from '../../../src/engine/profile/load-profile.js';
import { runCli } from '../../helpers/cli.js';

const LIMITS = ['--max-running-requests', '8', '--chunked-prefill-size', '256', '--max-total-tokens', '12000'];

let workDirectory: string;
let separate: RecordedRun;
let mixed: RecordedRun;
let paged: RecordedRun;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-replay-'));
  for (const [name, extra] of [['separate', []], ['mixed', ['--enable-mixed-chunk']], ['paged', ['--page-size', '64']]] as const) {
    const run = await runCli([
      'node', '--target', 'sim', '--virtual-time', '--profile', 'llama-3-8b-h100', ...LIMITS, ...extra, '--dataset-name', 'random-ids',
      '--random-input-len', '600', '--random-range-ratio', '0.2', '--random-output-len', '24', '--request-rate', '40', '--num-prompts', '120',
      '--seed', '4', '--output-dir', join(workDirectory, name), '--progress', 'off', '--quiet',
    ]);
    expect(run.code, run.stderr).toBe(0);
  }
  separate = readRecordedRun(join(workDirectory, 'separate'));
  mixed = readRecordedRun(join(workDirectory, 'mixed'));
  paged = readRecordedRun(join(workDirectory, 'paged'));
}, 90_000);
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('replaying a recorded run through the simulated engine', () => {
  it('reads the limits a run on the simulated engine recorded, and every request with its server stamps', () => {
    expect(separate.requests).toHaveLength(120);
    expect(separate.skipped).toBe(0);
    expect(separate.limits).toMatchObject({ maxRunningRequests: 8, chunkedPrefillSize: 256, maxTotalTokens: 12000, enableMixedChunk: false });
    expect(mixed.limits.enableMixedChunk).toBe(true);
    expect(separate.limits.pageSize).toBe(1);
    expect(paged.limits.pageSize).toBe(64);
  });

  it("replays a run on a paged server in its pages: exactly with the run's page size, not with page size 1", () => {
    const profile = loadProfile('llama-3-8b-h100');
    const same = replayRun(paged, profile, { ...paged.limits, enableMixedChunk: false });
    expect(replayObjective(paged.requests, same)).toBeLessThan(1e-6);
    const unpaged = replayRun(paged, profile, { ...paged.limits, pageSize: 1, enableMixedChunk: false });
    expect(replayObjective(paged.requests, unpaged)).toBeGreaterThan(1e-6);
    // calibrate --from-runs replays in the runs' pages unless --page-size says otherwise.
    const fromRuns = refitFromRuns({ runs: [paged], profile, limits: {}, maxEvaluations: 4 });
    expect(fromRuns.startObjective).toBeLessThan(1e-6);
    const toldOtherwise = refitFromRuns({ runs: [paged], profile, limits: { pageSize: 1 }, maxEvaluations: 4 });
    expect(toldOtherwise.startObjective).toBeGreaterThan(1e-6);
  });

  it('reproduces the run request by request with the profile and scheduling that made it, and not with the other scheduling', () => {
    const profile = loadProfile('llama-3-8b-h100');
    for (const [run, enableMixedChunk] of [[separate, false], [mixed, true]] as const) {
      const same = replayRun(run, profile, { ...run.limits, enableMixedChunk });
      // Records are rounded to the microsecond: the replay lands on them within that.
      run.requests.forEach((request, index) => {
        expect(Math.abs((same[index]?.firstTokenMs ?? Number.NaN) - request.firstTokenMs)).toBeLessThan(0.01);
        expect(Math.abs((same[index]?.finishedMs ?? Number.NaN) - request.finishedMs)).toBeLessThan(0.01);
      });
      expect(replayObjective(run.requests, same)).toBeLessThan(1e-6);
      const other = replayRun(run, profile, { ...run.limits, enableMixedChunk: !enableMixedChunk });
      expect(replayObjective(run.requests, other)).toBeGreaterThan(1e-3);
    }
    const real = replayMetrics(separate.requests);
    expect(real.throughputRps).toBeGreaterThan(0);
    expect(real.ttftP90Ms).toBeGreaterThanOrEqual(real.ttftP50Ms);
  });
});
