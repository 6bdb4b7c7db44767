import { setTimeout as sleep } from 'node:timers/promises';
import { ServelabError } from '../../../errors/servelab-error.js';
import type { ProcessPlacement, ServerHandle } from '../../../types/cluster.js';
import { localPlacement } from '../../placement/local/local-placement.js';
import { allWorkersHealthy } from '../router-workers-ready.js';
import { pdRouterArgs, type PdRouterArgs } from '../smg/smg-args.js';

export interface SglangRouterSettings {
  workerUrls: string[];
  policy: string;
  port: number;
  prometheusPort: number;
  host?: string;
  pythonExecutable?: string;
  logPath?: string;
  readyTimeoutMs?: number;
  /** Where the process runs (default: this host). */
  placement?: ProcessPlacement;
  node?: string;
  /** Prefill/decode disaggregation: its PD mode over these servers (`workerUrls` is then not passed). */
  pd?: PdRouterArgs;
}

/** `python -m sglang_router.launch_router` arguments (sglang-router 0.3.x, docs/routing.md). */
export function sglangRouterArgs(settings: SglangRouterSettings): string[] {
  return [
    '-m', 'sglang_router.launch_router',
    ...(settings.pd === undefined ? ['--worker-urls', ...settings.workerUrls] : pdRouterArgs(settings.pd)),
    '--host', settings.host ?? '127.0.0.1',
    '--port', String(settings.port),
    '--policy', settings.policy,
    // It always serves Prometheus metrics (default port 29000); each router gets its own so two runs never collide.
    '--prometheus-port', String(settings.prometheusPort),
  ];
}

/**
 * Launches sglang-router when it is installed. `/readiness` turns 200 once one worker is healthy, so readiness here
 * means `GET /workers` lists every worker as healthy (or, for versions without health fields, lists them all).
 */
export async function launchSglangRouter(settings: SglangRouterSettings): Promise<ServerHandle> {
  const python = settings.pythonExecutable ?? 'python';
  const placement = settings.placement ?? localPlacement;
  // It listens where the placement says others reach its node (127.0.0.1 locally).
  const host = settings.host ?? placement.hostOf(settings.node);
  const child = placement.spawn({ name: 'sglang-router', command: python, args: sglangRouterArgs({ ...settings, host }), logPath: settings.logPath, stopGraceMs: 5_000, ...(settings.node === undefined ? {} : { node: settings.node }) });
  const url = `http://${host}:${settings.port}`;
  const deadline = performance.now() + (settings.readyTimeoutMs ?? 60_000);
  try {
    while (!(await allWorkersHealthy(url, settings.workerUrls.length))) {
      if (child.hasExited) throw child.exitFailure('get ready');
      if (performance.now() > deadline) throw child.failure('NOT_READY', `sglang-router did not list all ${settings.workerUrls.length} workers as healthy in time`);
      await sleep(250);
    }
    return { name: 'sglang-router', url, pid: child.pid, logPath: child.logPath, exited: child.exited, stop: () => child.stop(), signal: (signal) => child.signal(signal) };
  } catch (error) {
    await child.stop();
    const tail = child.logTail();
    if (/failed to start .*ENOENT/.test(tail)) {
      throw new ServelabError('NOT_INSTALLED', `sglang-router is unavailable: the Python interpreter "${python}" was not found; install Python with sglang-router, or use --router builtin`);
    }
    if (/No module named ['"]?sglang_router/.test(tail)) {
      throw new ServelabError('NOT_INSTALLED', `sglang-router is not installed for "${python}": install it (pip install sglang-router) or use --router builtin`);
    }
    throw error;
  }
}
