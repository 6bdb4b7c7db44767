import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeTest } from '../../src/index.js';

/**
 * The simulated engine against closed-form queueing results (docs/simulated-engine.md, "Checked against queueing
 * theory"). With the `simple` profile every scheduling step lasts exactly `stepMs`; with one running request at a time,
 * a request with an exact output length L occupies the server for exactly L steps (one prefill step that yields the
 * first token, then L - 1 decode steps), and the next request is admitted at the step boundary where the previous one
 * finishes. Poisson arrivals then make the engine an M/D/1 queue with service time D = L x stepMs, whose mean wait
 * in the queue is Pollaczek-Khinchine's Wq = rho D / (2 (1 - rho)), rho = lambda D.
 */
let workDirectory: string;
let profile: string;
const STEP_MS = 10;
const OUTPUT_TOKENS = 10;
const SERVICE_S = (STEP_MS * OUTPUT_TOKENS) / 1000;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-queueing-'));
  profile = join(workDirectory, 'profile.json');
  await writeFile(profile, JSON.stringify({ kind: 'simple', stepMs: STEP_MS }));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

async function meanWaitAndService(requestRate: number, numPrompts: number, seed: number): Promise<{ meanWaitS: number; meanServiceS: number }> {
  const result = await new NodeTest({
    virtualTime: true, profile, maxRunningRequests: 1, requestRate, numPrompts, seed,
    randomInputLen: 32, randomOutputLen: OUTPUT_TOKENS, randomRangeRatio: 1, outputDir: join(workDirectory, `rate-${requestRate}-${seed}`), progress: 'off',
  }).run();
  let waitSum = 0;
  let serviceSum = 0;
  for (const record of result.run.records) {
    waitSum += (record.queueTimeEnd as number) - (record.queueTimeStart as number);
    serviceSum += (record.finishTime as number) - (record.queueTimeEnd as number);
  }
  return { meanWaitS: waitSum / result.run.records.length, meanServiceS: serviceSum / result.run.records.length };
}

describe('simulated engine against M/D/1 (Pollaczek-Khinchine)', () => {
  for (const rho of [0.5, 0.8]) {
    it(`mean queueing delay at utilisation ${rho}`, async () => {
      const lambda = rho / SERVICE_S;
      const expectedWaitS = (rho * SERVICE_S) / (2 * (1 - rho));
      // Long runs: the mean wait of a heavily loaded queue converges slowly (its samples are strongly correlated).
      const { meanWaitS, meanServiceS } = await meanWaitAndService(lambda, rho < 0.7 ? 20_000 : 60_000, 3);
      // Epoch-second timestamps carry about 0.2 µs of float resolution.
      expect(meanServiceS).toBeCloseTo(SERVICE_S, 6);
      expect(Math.abs(meanWaitS - expectedWaitS) / expectedWaitS, `mean wait ${meanWaitS} s vs Pollaczek-Khinchine ${expectedWaitS} s`).toBeLessThan(rho < 0.7 ? 0.05 : 0.08);
    });
  }
});
