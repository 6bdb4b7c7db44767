import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refitFromValidation } from '../../src/experiments/validation-refit.js';
import type { RealValidationRun } from '../../src/experiments/validate-profiles.js';
import type { Summary } from '../../src/types/summary.js';
import { eightMsProfile } from '../helpers/test-profiles.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-validation-refit-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const LIMITS = { maxRunningRequests: 16, chunkedPrefillSize: 512, maxTotalTokens: 60_000 };
const start = { label: 'roofline', profile: eightMsProfile('refit-start') };

/** A validation run against a server that stamps nothing (SGLang without --enable-metrics): client times only. */
async function unstampedRun(rate: number): Promise<RealValidationRun> {
  const directory = join(workDirectory, `real-${rate}`);
  await rm(directory, { recursive: true, force: true });
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, 'config.json'), JSON.stringify({ test: 'node', target: 'attach' }));
  const record = { request_id: 'r0', success: true, arrival_time: 1, first_token_time: 1.05, finish_time: 1.5, actual_prompt_tokens: 300, actual_output_tokens: 20 };
  await writeFile(join(directory, 'requests.jsonl'), `${JSON.stringify(record)}\n`);
  return { requestRate: rate, prompts: 1, directory, summary: {} as Summary };
}

describe('refitFromValidation', () => {
  const compare = async (): Promise<never> => {
    throw new Error('no twin is run when the refit is skipped');
  };

  it('is skipped, saying why, with a single validation rate: nothing would be left to check it on', async () => {
    const outcome = await refitFromValidation({ validation: { realRuns: [await unstampedRun(2)], compare }, start, limits: LIMITS });
    expect(outcome).toEqual({ skipped: 'it needs two validation rates or more, one to fit and one to check' });
  });

  it("is skipped with the records' own reason when the server stamped no timings, instead of failing calibrate", async () => {
    const outcome = await refitFromValidation({ validation: { realRuns: [await unstampedRun(2), await unstampedRun(8)], compare }, start, limits: LIMITS });
    expect('skipped' in outcome && outcome.skipped).toMatch(/real-2 is not a run calibrate --from-runs can fit from \(none of its 1 requests succeeded with the server's queue, first-token and finish stamps\); .*--enable-metrics/);
  });
});
