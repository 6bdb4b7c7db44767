import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServelabError } from '../../../errors/servelab-error.js';
import type { ProcessPlacement, ServerHandle } from '../../../types/cluster.js';
import { localPlacement } from '../../placement/local/local-placement.js';
import { allWorkersHealthy } from '../router-workers-ready.js';
import { smgRouterArgs, type SmgSettings } from './smg-args.js';

export interface SmgLaunchSettings extends SmgSettings {
  /** The Python whose smg module to run when no `smg` command is on PATH. */
  pythonExecutable?: string;
  logPath?: string;
  readyTimeoutMs?: number;
  /** Where to look for the `smg` command (default: this process's PATH). */
  searchPath?: string;
  /** Where the process runs (default: this host). */
  placement?: ProcessPlacement;
  node?: string;
}

/** How smg is started: its `smg launch` command when on PATH, else `python -m smg.launch_router`. */
export async function smgCommand(settings: Pick<SmgLaunchSettings, 'pythonExecutable' | 'searchPath'>): Promise<{ command: string; leadingArgs: string[] }> {
  const smg = await findOnPath('smg', settings.searchPath ?? process.env.PATH ?? '');
  if (smg !== undefined) return { command: smg, leadingArgs: ['launch'] };
  return { command: settings.pythonExecutable ?? 'python', leadingArgs: ['-m', 'smg.launch_router'] };
}

/**
 * Launches smg (Shepherd Model Gateway, SGLang's router since sglang-router 0.3.2). Ready once `GET /workers` lists
 * every worker as healthy. When neither the `smg` command nor the Python module is there, one clear NOT_INSTALLED error.
 */
export async function launchSmg(settings: SmgLaunchSettings): Promise<ServerHandle> {
  const { command, leadingArgs } = await smgCommand(settings);
  const placement = settings.placement ?? localPlacement;
  // It listens where the placement says others reach its node (127.0.0.1 locally).
  const host = settings.host ?? placement.hostOf(settings.node);
  const child = placement.spawn({ name: 'smg', command, args: [...leadingArgs, ...smgRouterArgs({ ...settings, host })], logPath: settings.logPath, stopGraceMs: 5_000, ...(settings.node === undefined ? {} : { node: settings.node }) });
  const url = `http://${host}:${settings.port}`;
  const deadline = performance.now() + (settings.readyTimeoutMs ?? 60_000);
  try {
    while (!(await allWorkersHealthy(url, settings.workerUrls.length))) {
      if (child.hasExited) throw child.exitFailure('get ready');
      if (performance.now() > deadline) throw child.failure('NOT_READY', `smg did not list all ${settings.workerUrls.length} workers as healthy in time`);
      await sleep(250);
    }
    return { name: 'smg', url, pid: child.pid, logPath: child.logPath, exited: child.exited, stop: () => child.stop(), signal: (signal) => child.signal(signal) };
  } catch (error) {
    await child.stop();
    const tail = child.logTail();
    if (/failed to start .*ENOENT/.test(tail) || /No module named ['"]?smg/.test(tail)) {
      throw new ServelabError('NOT_INSTALLED', `smg is not installed: no \`smg\` command on PATH and no smg module for "${command}"; install it (pip install smg) or use --router builtin`);
    }
    throw error;
  }
}

async function findOnPath(name: string, searchPath: string): Promise<string | undefined> {
  for (const directory of searchPath.split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here: try the next directory.
    }
  }
  return undefined;
}
