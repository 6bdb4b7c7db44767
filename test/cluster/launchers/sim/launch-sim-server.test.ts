import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchSimServer } from '../../../../src/cluster/launchers/sim/launch-sim-server.js';
import { isServelabError } from '../../../../src/errors/servelab-error.js';
import { isAlive, pidFromLog } from '../../../helpers/cli.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-sim-launch-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('launchSimServer with an AbortSignal', () => {
  it('kills the process it was starting and rejects as INTERRUPTED when the signal aborts before it is ready', async () => {
    const controller = new AbortController();
    const logPath = join(workDirectory, 'aborted.log');
    // A ready timeout no test waits out: only the abort can end this launch in time.
    const launching = launchSimServer({ name: 'aborted', logPath, readyTimeoutMs: 600_000, signal: controller.signal }).catch((error: unknown) => error);
    controller.abort();
    const error = await launching;
    expect(isServelabError(error) && error.code).toBe('INTERRUPTED');
    expect((error as Error).message).toMatch(/interrupted while aborted was starting/);
    const pid = pidFromLog(await readFile(logPath, 'utf8'));
    expect(pid).toBeDefined();
    expect(isAlive(pid as number)).toBe(false);
  }, 30_000);

  it('starts nothing when the signal has already aborted', async () => {
    const logPath = join(workDirectory, 'never.log');
    const error = await launchSimServer({ name: 'never', logPath, signal: AbortSignal.abort() }).catch((caught: unknown) => caught);
    expect(isServelabError(error) && error.code).toBe('INTERRUPTED');
    await expect(readFile(logPath, 'utf8')).rejects.toThrow(/ENOENT/);
  });
});
