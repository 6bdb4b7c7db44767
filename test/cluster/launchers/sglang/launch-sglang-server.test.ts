import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchSglangServer } from '../../../../src/cluster/launchers/sglang/launch-sglang-server.js';
import { freePortRun } from '../../../helpers/free-port-run.js';
import { isServelabError } from '../../../../src/errors/servelab-error.js';
import { isAlive, pidFromLog } from '../../../helpers/cli.js';

/**
 * No GPU or SGLang here: the stand-in `python` (test/fixtures/stand-ins/python) in `never-ready` mode prints SGLang's
 * weight-loading lines forever, as a server loading a large model does for minutes.
 */
const standIn = fileURLToPath(new URL('../../../fixtures/stand-ins/python', import.meta.url));

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-sglang-launch-'));
  process.env.STANDIN_MODE = 'never-ready';
});
afterAll(async () => {
  delete process.env.STANDIN_MODE;
  await rm(workDirectory, { recursive: true, force: true });
});

describe('launchSglangServer with an AbortSignal', () => {
  it('stops the server it was starting and rejects as INTERRUPTED when the signal aborts during the model load', async () => {
    const controller = new AbortController();
    const logPath = join(workDirectory, 'loading.log');
    // A ready timeout no test waits out: only the abort can end this launch in time.
    const launching = launchSglangServer({
      name: 'sglang', modelPath: 'some/model', gpuId: 0, port: await freePortRun(1), pythonExecutable: standIn, logPath, readyTimeoutMs: 600_000,
      signal: controller.signal,
    }).catch((error: unknown) => error);
    // Abort once the load has visibly begun: the launch is then waiting on readiness, not on the spawn.
    for (let tries = 0; tries < 200 && !(await readFile(logPath, 'utf8').catch(() => '')).includes('Load weight begin'); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    controller.abort();
    const error = await launching;
    expect(isServelabError(error) && error.code).toBe('INTERRUPTED');
    expect((error as Error).message).toMatch(/interrupted while sglang was starting/);
    const pid = pidFromLog(await readFile(logPath, 'utf8'));
    expect(pid).toBeDefined();
    expect(isAlive(pid as number)).toBe(false);
  }, 60_000);

  it('starts nothing when the signal has already aborted', async () => {
    const logPath = join(workDirectory, 'never.log');
    const error = await launchSglangServer({
      name: 'sglang', modelPath: 'some/model', gpuId: 0, port: await freePortRun(1), pythonExecutable: standIn, logPath, signal: AbortSignal.abort(),
    }).catch((caught: unknown) => caught);
    expect(isServelabError(error) && error.code).toBe('INTERRUPTED');
    await expect(readFile(logPath, 'utf8')).rejects.toThrow(/ENOENT/);
  });
});
