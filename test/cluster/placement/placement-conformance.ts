import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningUrl } from '../../../src/cluster/placement/listening-url.js';
import { ServelabError } from '../../../src/errors/servelab-error.js';
import type { ProcessPlacement } from '../../../src/types/cluster.js';
import { isAlive } from '../../helpers/cli.js';

/** Polls without asserting how long it took: the machine may be loaded. */
async function eventually(condition: () => boolean, limitMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

/**
 * What every placement guarantees to the launchers (docs/placement.md): the output reaches the log, an exit is
 * observed with its status, stop() ends everything the process started, and a listening URL is learned from the
 * process's own line. `node` is a node the placement runs processes on.
 */
export function placementConformance(label: string, placement: () => ProcessPlacement, node?: string): void {
  describe(`placement conformance: ${label}`, () => {
    let directory: string;
    beforeAll(async () => {
      directory = await mkdtemp(join(tmpdir(), 'servelab-placement-'));
    });
    afterAll(async () => {
      await rm(directory, { recursive: true, force: true });
    });
    const where = node === undefined ? {} : { node };

    it('observes an exit with its code, and writes what the process printed to its log', async () => {
      const logPath = join(directory, 'exit.log');
      const child = placement().spawn({ name: 'exit-probe', command: process.execPath, args: ['-e', 'console.log("hello from the child"); console.error("and its stderr"); process.exit(3)'], logPath, ...where });
      expect(await child.exited).toEqual({ code: 3, signal: null });
      expect(child.hasExited).toBe(true);
      await child.stop();
      const log = await readFile(logPath, 'utf8');
      expect(log).toContain('hello from the child');
      expect(log).toContain('and its stderr');
      expect(child.logTail()).toContain('hello from the child');
    });

    it('passes the extra environment, never the API key', async () => {
      const saved = process.env['OPENAI_API_KEY'];
      process.env['OPENAI_API_KEY'] = 'sk-placement-secret';
      try {
        const child = placement().spawn({ name: 'env-probe', command: process.execPath, args: ['-e', 'console.log(`seen: ${process.env.OPENAI_API_KEY ?? "none"} ${process.env.EXTRA_SETTING ?? "none"}`)'], env: { EXTRA_SETTING: 'given' }, ...where });
        const [line] = await child.waitForLine(/^seen: .*$/, 10_000, 'print its environment');
        await child.stop();
        expect(line).toBe('seen: none given');
      } finally {
        if (saved === undefined) delete process.env['OPENAI_API_KEY'];
        else process.env['OPENAI_API_KEY'] = saved;
      }
    });

    it('stop() ends the process and everything it started, and is safe to call twice', async () => {
      // The child starts a grandchild that ignores SIGTERM (as a stubborn worker would) and prints both ids.
      const grandchild = 'process.on("SIGTERM", () => undefined); setInterval(() => undefined, 1000)';
      const script = `const { spawn } = require("node:child_process"); const g = spawn(process.execPath, ["-e", ${JSON.stringify(grandchild)}], { stdio: "ignore" }); console.log("pids " + process.pid + " " + g.pid); setInterval(() => undefined, 1000);`;
      const child = placement().spawn({ name: 'group-probe', command: process.execPath, args: ['-e', script], stopGraceMs: 500, ...where });
      const [, parentPid, grandchildPid] = await child.waitForLine(/^pids (\d+) (\d+)$/, 10_000, 'start its grandchild');
      expect(isAlive(Number(parentPid))).toBe(true);
      expect(isAlive(Number(grandchildPid))).toBe(true);
      try {
        await Promise.all([child.stop(), child.stop()]);
        expect(child.hasExited).toBe(true);
        expect(await eventually(() => !isAlive(Number(parentPid)) && !isAlive(Number(grandchildPid)))).toBe(true);
      } finally {
        // Only when the guarantee failed: the test still leaves nothing running.
        for (const pid of [parentPid, grandchildPid]) if (isAlive(Number(pid))) process.kill(Number(pid), 'SIGKILL');
      }
    });

    it('fails a wait with PROCESS_EXITED and the log tail when the process ends first', async () => {
      const child = placement().spawn({ name: 'dies-early', command: process.execPath, args: ['-e', 'console.log("cannot start: no model"); process.exit(1)'], ...where });
      const error: unknown = await child.waitForLine(/never printed/, 10_000, 'get ready').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServelabError);
      expect((error as ServelabError).code).toBe('PROCESS_EXITED');
      expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).toContain('cannot start: no model');
      await child.stop();
    });

    it('learns where a process on a free port listens from its own line, at an address that answers', async () => {
      const server = 'const s = require("node:http").createServer((q, r) => r.end("ok")); s.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + s.address().port));';
      const child = placement().spawn({ name: 'listen-probe', command: process.execPath, args: ['-e', server], ...where });
      try {
        const url = await listeningUrl(child, /listening on (http:\/\/\S+)/, 10_000);
        expect(new URL(url).hostname).toBe(placement().hostOf(node));
        const response = await fetch(url);
        expect(await response.text()).toBe('ok');
      } finally {
        await child.stop();
      }
    });

    it('puts the address others reach the process at in place of a wildcard address in its line', async () => {
      // The process says 0.0.0.0, as a server bound to every interface does; it listens on the placement's address only.
      const host = placement().hostOf(node);
      const server = `const s = require("node:http").createServer((q, r) => r.end("ok")); s.listen(0, ${JSON.stringify(host)}, () => console.log("listening on http://0.0.0.0:" + s.address().port));`;
      const child = placement().spawn({ name: 'wildcard-probe', command: process.execPath, args: ['-e', server], ...where });
      try {
        const url = await listeningUrl(child, /listening on (http:\/\/\S+)/, 10_000);
        expect(new URL(url).hostname).toBe(host);
        expect(await (await fetch(url)).text()).toBe('ok');
      } finally {
        await child.stop();
      }
    });

    it('finds a port that is free on the node, and names the flag when one is taken', async () => {
      const port = await placement().freePort(node);
      expect(port).toBeGreaterThan(0);
      await placement().assertPortFree(port, '--port', node);
      const { createServer } = await import('node:net');
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(port, placement().hostOf(node), resolve));
      try {
        const error: unknown = await placement().assertPortFree(port, '--base-port', node).catch((caught: unknown) => caught);
        expect((error as ServelabError).code).toBe('PORT_IN_USE');
        expect((error as Error).message).toContain('--base-port');
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    });
  });
}
