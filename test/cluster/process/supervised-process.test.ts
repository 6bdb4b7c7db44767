import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SupervisedProcess } from '../../../src/cluster/process/supervised-process.js';
import { assertCliBuilt } from '../../helpers/cli.js';

/** Running: exists and is not a zombie (a reparented zombie may never be reaped in a container, yet holds nothing). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

/**
 * A launcher shaped like SGLang's (or nginx's master): it forks a helper, in its process group, that keeps running
 * on its own (and holds the launcher's stdout, as SGLang's scheduler does), prints the helper's pid, then idles.
 */
const LAUNCHER = [
  "const { spawn } = require('node:child_process');",
  "const helper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: ['ignore', 'inherit', 'inherit'] });",
  'console.log(`helper ${helper.pid}`);',
  'setInterval(() => {}, 1000);',
].join('\n');

const leftovers: number[] = [];
afterEach(() => {
  // Only what these tests started, by pid.
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone, as it should be.
    }
  }
});

describe('a launched process whose leader dies first (issue 29)', () => {
  it('stop() still stops its group: the helper the dead leader forked is gone afterwards', async () => {
    const launched = new SupervisedProcess({ name: 'launcher', command: process.execPath, args: ['-e', LAUNCHER], stopGraceMs: 2_000 });
    const helperPid = Number((await launched.waitForLine(/^helper (\d+)$/, 15_000, 'fork its helper'))[1]);
    leftovers.push(helperPid, launched.pid as number);
    process.kill(launched.pid as number, 'SIGKILL'); // the leader alone
    await launched.exited;
    expect(isRunning(helperPid)).toBe(true);
    await launched.stop();
    expect(isRunning(launched.pid as number)).toBe(false);
    expect(isRunning(helperPid)).toBe(false);
  });

  it('signal() reaches the group after the leader has exited (a failure schedule that kills the node)', async () => {
    const launched = new SupervisedProcess({ name: 'launcher', command: process.execPath, args: ['-e', LAUNCHER] });
    const helperPid = Number((await launched.waitForLine(/^helper (\d+)$/, 15_000, 'fork its helper'))[1]);
    leftovers.push(helperPid, launched.pid as number);
    process.kill(launched.pid as number, 'SIGKILL');
    await launched.exited;
    launched.signal('SIGKILL');
    expect(await waitFor(() => !isRunning(helperPid), 10_000)).toBe(true);
    await launched.stop();
  });

  it('the watchdog keeps the group after the leader died, and kills what is left when servelab is SIGKILLed', async () => {
    assertCliBuilt(); // the watchdog runs from the built files
    const supervised = fileURLToPath(new URL('../../../dist/src/cluster/process/supervised-process.js', import.meta.url));
    // A servelab-like parent: launches the launcher, lets its leader die, then is itself killed before any teardown.
    const parentScript = [
      `const { SupervisedProcess } = await import(${JSON.stringify(supervised)});`,
      `const launched = new SupervisedProcess({ name: 'launcher', command: process.execPath, args: ['-e', ${JSON.stringify(LAUNCHER)}] });`,
      "const [, helper] = await launched.waitForLine(/^helper (\\d+)$/, 15000, 'fork its helper');",
      'process.kill(launched.pid, "SIGKILL");',
      'await launched.exited;',
      'console.log(`leader ${launched.pid} gone, helper ${helper}`);',
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const parent = spawn(process.execPath, ['--input-type=module', '-e', parentScript], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    parent.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    parent.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => parent.once('exit', resolve));
    expect(await waitFor(() => /helper \d+/.test(output), 20_000), output).toBe(true);
    const helperPid = Number(/helper (\d+)/.exec(output)?.[1]);
    leftovers.push(helperPid);
    expect(isRunning(helperPid)).toBe(true);
    parent.kill('SIGKILL');
    await exited;
    expect(await waitFor(() => !isRunning(helperPid), 10_000)).toBe(true);
  });

  it('a helper that left the group (a new session) is stopped too, by what the watchdog recorded before the leader died', async () => {
    assertCliBuilt();
    const supervised = fileURLToPath(new URL('../../../dist/src/cluster/process/supervised-process.js', import.meta.url));
    const escapingLauncher = LAUNCHER.replace("{ stdio: ['ignore', 'inherit', 'inherit'] }", "{ stdio: 'ignore', detached: true }");
    // The watchdog reads the process table every 500 ms, in its own process; the parent gives it a few rounds (a wait
    // for another process to act, not a measured duration) before the leader dies.
    const parentScript = [
      `const { SupervisedProcess } = await import(${JSON.stringify(supervised)});`,
      `const launched = new SupervisedProcess({ name: 'launcher', command: process.execPath, args: ['-e', ${JSON.stringify(escapingLauncher)}] });`,
      "const [, helper] = await launched.waitForLine(/^helper (\\d+)$/, 15000, 'fork its helper');",
      'console.log(`helper ${helper}`);',
      'await new Promise((resolve) => setTimeout(resolve, 3000));',
      'process.kill(launched.pid, "SIGKILL");',
      'await launched.exited;',
      'await launched.stop();',
      'console.log("stopped");',
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const parent = spawn(process.execPath, ['--input-type=module', '-e', parentScript], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    parent.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    parent.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      expect(await waitFor(() => /helper \d+/.test(output), 20_000), output).toBe(true);
      const helperPid = Number(/helper (\d+)/.exec(output)?.[1]);
      leftovers.push(helperPid);
      expect(await waitFor(() => output.includes('stopped'), 30_000), output).toBe(true);
      // servelab is still running: the group was stopped, and what escaped it goes with it.
      expect(await waitFor(() => !isRunning(helperPid), 10_000)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
