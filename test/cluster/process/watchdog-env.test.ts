import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type CliRun } from '../../helpers/cli.js';

const fastProfile = fileURLToPath(new URL('../../fixtures/profiles/simple-2ms.json', import.meta.url));
const SECRET = 'sk-watchdog-probe-secret';
let workDirectory: string;
let run: CliRun | undefined;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-watchdog-env-'));
});
afterAll(async () => {
  if (run !== undefined && run.child.exitCode === null) run.child.kill('SIGKILL');
  await rm(workDirectory, { recursive: true, force: true });
});

/** The watchdog the CLI started (a child of it running watchdog-main.js), found through /proc. */
async function findWatchdog(parentPid: number): Promise<number | undefined> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (after the parenthesised name, which may hold spaces) is the parent's pid.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== parentPid) continue;
      if ((await readFile(`/proc/${entry}/cmdline`, 'utf8')).includes('watchdog-main')) return Number(entry);
    } catch {
      // Gone between the listing and the read.
    }
  }
  return undefined;
}

describe.runIf(existsSync('/proc/self/environ'))('the watchdog process (issue 29)', () => {
  it('does not hold the API key variable', async () => {
    run = startCli(
      ['node', '--request-rate', '20', '--num-prompts', '2000', '--profile', fastProfile, '--output-dir', join(workDirectory, 'run'), '--progress', 'lines'],
      { env: { OPENAI_API_KEY: SECRET } },
    );
    const cliPid = run.child.pid as number;
    let watchdogPid: number | undefined;
    while (watchdogPid === undefined && run.child.exitCode === null) {
      watchdogPid = await findWatchdog(cliPid);
      if (watchdogPid === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(watchdogPid).toBeDefined();
    const environment = (await readFile(`/proc/${watchdogPid}/environ`, 'utf8')).split('\0');
    run.child.kill('SIGINT');
    await run.done;
    // The variable is there to be withheld: the CLI itself was given it.
    expect(environment.some((line) => line.startsWith('PATH='))).toBe(true);
    expect(environment.filter((line) => line.startsWith('OPENAI_API_KEY=') || line.includes(SECRET))).toEqual([]);
  }, 60_000);
});
