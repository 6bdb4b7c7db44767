import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { resolveSchedulingPolicy } from '../../src/engine/policy/load-policy.js';
import { isServelabError } from '../../src/errors/servelab-error.js';
import { makeHarness, runArrivals, tokenIds } from './engine-harness.js';

const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'custom-scheduling-policy', 'shortest-prompt-first.ts');

async function expectLoadFailure(path: string, pattern: RegExp): Promise<void> {
  try {
    await resolveSchedulingPolicy(path);
  } catch (error) {
    expect(isServelabError(error) && error.code).toBe('MODULE_LOAD_FAILED');
    expect((error as Error).message).toMatch(pattern);
    return;
  }
  throw new Error(`${path} loaded`);
}

describe('custom scheduling policies', () => {
  test('the worked example loads from its path and reorders the queue', async () => {
    const policy = await resolveSchedulingPolicy(EXAMPLE);
    expect(policy.name).toBe('shortest-prompt-first');
    const harness = makeHarness({ profile: { kind: 'simple', stepMs: 10 }, maxRunningRequests: 1, schedulePolicy: policy });
    runArrivals(harness, [
      { atMs: 0, input: { id: 'first', promptTokenIds: tokenIds(10), maxNewTokens: 2 } },
      { atMs: 1, input: { id: 'long', promptTokenIds: tokenIds(500, 1000), maxNewTokens: 2 } },
      { atMs: 2, input: { id: 'short', promptTokenIds: tokenIds(5, 5000), maxNewTokens: 2 } },
    ]);
    const order = [...harness.finished.values()].sort((left, right) => left.forwardEntryMs - right.forwardEntryMs).map((view) => view.id);
    expect(order).toEqual(['first', 'short', 'long']);
  });

  test('a module exporting a factory function is accepted', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-policy-'));
    const path = join(directory, 'factory.mjs');
    writeFileSync(path, 'export const policy = () => ({ name: "newest-first", order(waiting) { waiting.reverse(); } });\n');
    expect((await resolveSchedulingPolicy(path)).name).toBe('newest-first');
  });

  test('MODULE_LOAD_FAILED for a missing module or one without a policy', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-policy-'));
    await expectLoadFailure(join(directory, 'absent.mjs'), /neither built in \(fcfs, lpm\) nor a loadable module/);
    const empty = join(directory, 'empty.mjs');
    writeFileSync(empty, 'export const nothing = 1;\n');
    await expectLoadFailure(empty, /does not export a scheduling policy/);
    const broken = join(directory, 'broken.mjs');
    writeFileSync(broken, 'export default {{;\n');
    await expectLoadFailure(broken, /not a loadable module|neither built in/);
  });
});
