import { execFileSync } from 'node:child_process';
import { DEFAULT_NGINX_PATH } from '../../src/cluster/launchers/nginx/start-nginx.js';

export interface ToolProbe {
  /** The program as the code under test runs it: a name looked up on PATH, or the absolute path it uses. */
  command: string;
  /** A harmless run that succeeds only where the program works (its version, a no-op). */
  args: string[];
}

const reasons = new Map<string, string | undefined>();

/**
 * Why a test that needs an outside program cannot run on this machine, or undefined when it can. The program is run
 * once (`probe`), not merely looked for, so that one present but unusable (a broken install, a binary hidden by a
 * mount) counts as missing. Each missing tool prints one line, once per test file, naming the Debian package to
 * install; `.ci/run` installs them all, so CI skips nothing.
 *
 * Use with `it.skipIf(reason !== undefined)` or `describe.skipIf(...)`.
 */
export function requireTool(tool: string, debianPackage: string, probe: ToolProbe = { command: tool, args: ['--version'] }): string | undefined {
  const key = `${probe.command} ${probe.args.join(' ')}`;
  if (reasons.has(key)) return reasons.get(key);
  let reason: string | undefined;
  try {
    execFileSync(probe.command, probe.args, { stdio: 'ignore', timeout: 30_000 });
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message.split('\n')[0];
    reason = `needs ${tool}, which cannot run here (${key}: ${why}): apt-get install ${debianPackage}`;
    console.warn(`skipped: ${reason}`);
  }
  reasons.set(key, reason);
  return reason;
}

/** nginx at the path servelab's launcher runs (src/cluster/launchers/nginx/start-nginx.ts). */
export const nginxMissing = (): string | undefined => requireTool('nginx', 'nginx', { command: DEFAULT_NGINX_PATH, args: ['-v'] });

/** Chromium at the path the browser test launches. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const chromiumMissing = (): string | undefined => requireTool('Chromium', 'chromium', { command: CHROMIUM_PATH, args: ['--version'] });

/** faketime, run as the real-hop test runs it (a shifted clock around a command). */
export const faketimeMissing = (): string | undefined => requireTool('faketime', 'faketime', { command: 'faketime', args: ['-f', '+0s', 'true'] });

/** iproute2's `ip` (network namespaces). */
export const ipMissing = (): string | undefined => requireTool('ip', 'iproute2', { command: 'ip', args: ['-V'] });
