import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { httpRouterControl } from '../../src/cluster/failures/router-control.js';
import { launchBuiltinRouter } from '../../src/cluster/launchers/builtin-router/launch-builtin-router.js';
import { startScriptedUpstream } from '../routing/scripted-upstream.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

describe('the launched builtin router and its per-run control token (issue 11)', () => {
  it("lets servelab's own failure executor drain and restore a worker, refuses anyone without the token, and writes the token nowhere", async () => {
    const upstreams = await Promise.all([startScriptedUpstream('a'), startScriptedUpstream('b')]);
    for (const upstream of upstreams) cleanups.push(() => upstream.close());
    const directory = await mkdtemp(join(tmpdir(), 'servelab-router-token-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    const logPath = join(directory, 'router.log');
    const urls = upstreams.map((upstream) => upstream.url);
    const { handle, controlToken } = await launchBuiltinRouter({ workerUrls: urls, policy: 'round_robin', logPath });
    cleanups.push(() => handle.stop());

    const stranger = httpRouterControl(handle.url);
    await expect(stranger.removeWorker(urls[1] as string)).rejects.toThrow(/answered 401/);
    const control = httpRouterControl(handle.url, controlToken);
    await control.removeWorker(urls[1] as string);
    await control.addWorker(urls[1] as string);

    await handle.stop();
    const log = await readFile(logPath, 'utf8');
    expect(log).toContain('servelab router listening on');
    expect(log).not.toContain(controlToken);
  });
});
