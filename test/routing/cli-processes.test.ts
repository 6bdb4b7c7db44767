import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli, type CliRun } from '../helpers/cli.js';
import { startScriptedUpstream, type ScriptedUpstream } from './scripted-upstream.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

/** Waits for a line of stdout matching `pattern`; fails with the process's output if it exits or takes too long. */
async function waitForLine(run: CliRun, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpMatchArray> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const match = run.stdout().match(pattern);
    if (match !== null) return match;
    if (run.child.exitCode !== null || performance.now() > deadline) {
      throw new Error(`no line matching ${pattern}; stdout: ${run.stdout()} stderr: ${run.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function stopOnCleanup(run: CliRun): void {
  closers.push(async () => {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
    await run.done;
  });
}

describe('servelab router and servelab taps as processes (built CLI)', () => {
  it('run the taps in front of servers and the router in front of the taps, and exit 0 on SIGTERM', async () => {
    const upstreams: ScriptedUpstream[] = await Promise.all([startScriptedUpstream('u0'), startScriptedUpstream('u1')]);
    for (const upstream of upstreams) closers.push(() => upstream.close());

    // The records endpoint needs the token servelab hands the processes it launches (here: by hand, in the environment).
    const token = 'c'.repeat(64);
    const taps = startCli(['taps', ...upstreams.flatMap((upstream) => ['--upstream', upstream.url])], { env: { SERVELAB_ROUTER_CONTROL_TOKEN: token } });
    stopOnCleanup(taps);
    const tapUrls = JSON.parse((await waitForLine(taps, /^servelab taps listening (\[.*\])$/m))[1] ?? '[]') as string[];
    expect(tapUrls).toHaveLength(2);

    const router = startCli(['router', '--port', '0', '--policy', 'round_robin', '--worker-urls', ...tapUrls]);
    stopOnCleanup(router);
    const routerUrl = (await waitForLine(router, /^servelab router listening on (http:\/\/\S+)$/m))[1] as string;

    for (let index = 0; index < 4; index++) {
      const answer = await request(`${routerUrl}/generate`, {
        method: 'POST',
        headers: { 'x-request-id': `cli-${index}` },
        body: JSON.stringify({ text: 'x', stream: false }),
      });
      expect(answer.statusCode).toBe(200);
      await answer.body.dump();
    }
    const refused = await request(`${tapUrls[0]}/_servelab/tap-records`);
    await refused.body.dump();
    expect(refused.statusCode).toBe(401);
    const fetched = (await (await request(`${tapUrls[0]}/_servelab/tap-records`, { headers: { 'x-servelab-control-token': token } })).body.json()) as { records: { requestId: string; hostIndex: number }[] };
    expect(fetched.records.map((record) => record.requestId).sort()).toEqual(['cli-0', 'cli-1', 'cli-2', 'cli-3']);
    expect(fetched.records.filter((record) => record.hostIndex === 1)).toHaveLength(2);

    router.child.kill('SIGTERM');
    taps.child.kill('SIGTERM');
    expect((await router.done).code).toBe(0);
    expect((await taps.done).code).toBe(0);
    expect(router.stderr()).toContain('is healthy (health check passed)');
  });

  it('exits non-zero with a one-line reason for a policy module that cannot be loaded', async () => {
    const router = startCli(['router', '--port', '0', '--policy', './no-such-policy.js', '--worker-urls', 'http://127.0.0.1:9']);
    stopOnCleanup(router);
    const { code } = await router.done;
    expect(code).not.toBe(0);
    expect(router.stderr()).toMatch(/could not load routing policy module .*no-such-policy\.js/);
  });
});
