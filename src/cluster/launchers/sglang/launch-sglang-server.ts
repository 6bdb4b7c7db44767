import { ServelabError } from '../../../errors/servelab-error.js';
import type { PlacedProcess, ProcessPlacement, ServerHandle } from '../../../types/cluster.js';
import { localPlacement } from '../../placement/local/local-placement.js';
import { abortedPromise, launchInterrupted } from '../launch-abort.js';
import { launchedHandle } from '../launched-handle.js';
import { pollUntilHealthy } from '../../readiness.js';
import { sglangServerArgs, visibleDevices, type SglangServerSettings } from './sglang-server-args.js';

export interface SglangLaunchSettings extends SglangServerSettings {
  name: string;
  gpuId: number | number[];
  pythonExecutable?: string;
  logPath?: string;
  readyTimeoutMs?: number;
  /** Where the process runs (default: this host). */
  placement?: ProcessPlacement;
  node?: string;
  /** Aborts the start-up (Ctrl-C): the process group is stopped at once instead of after the model has loaded. */
  signal?: AbortSignal;
}

/** SGLang prints this once its HTTP server has answered its own warmup request. */
const READY_LINE = /The server is fired up and ready to roll!/;

/**
 * Launches a real SGLang server pinned to its GPUs and waits until it is ready: its ready line or `/health` answering
 * 200, whichever comes first. A missing Python or SGLang is reported as NOT_INSTALLED, never faked.
 */
export async function launchSglangServer(settings: SglangLaunchSettings): Promise<ServerHandle> {
  const { signal } = settings;
  if (signal?.aborted === true) throw launchInterrupted(settings.name);
  const python = settings.pythonExecutable ?? 'python';
  const placement = settings.placement ?? localPlacement;
  const host = settings.host ?? placement.hostOf(settings.node);
  const child = placement.spawn({
    name: settings.name,
    ...(settings.node === undefined ? {} : { node: settings.node }),
    command: python,
    // It listens where the placement says others reach its node (127.0.0.1 locally).
    args: sglangServerArgs({ ...settings, host }),
    env: { CUDA_VISIBLE_DEVICES: visibleDevices(settings.gpuId, settings.tpSize) },
    logPath: settings.logPath,
    stopGraceMs: 15_000,
  });
  const url = `http://${host}:${settings.port}`;
  const timeoutMs = settings.readyTimeoutMs ?? 600_000;
  const aborted = abortedPromise(signal, settings.name);
  try {
    // Ready at the ready line or at the first healthy /health, whichever comes first. The line waiter alone decides
    // failure (NOT_READY after the timeout, PROCESS_EXITED if the process dies); it is cleaned up when the child exits.
    const ready = new Promise<void>((resolve, reject) => {
      child.waitForLine(READY_LINE, timeoutMs, 'get ready').then(() => resolve(), reject);
      void pollUntilHealthy(`${url}/health`, timeoutMs, () => !child.hasExited, 1_000).then((healthy) => {
        if (healthy) resolve();
      });
    });
    // An abort stops the wait; the readiness that loses the race is the same news, never unhandled.
    ready.catch(() => undefined);
    await Promise.race([ready, aborted.promise]);
    return {
      ...launchedHandle(settings.name, url, child, settings.node),
      ...(settings.requestLogDirectory === undefined ? {} : { requestLogDirectory: settings.requestLogDirectory }),
      // A relaunch (a failure schedule's restore) is not the start-up the signal was for.
      relaunch: () => launchSglangServer({ ...settings, signal: undefined }),
    };
  } catch (error) {
    await child.stop();
    throw explainMissingInstall(error, child, python);
  } finally {
    aborted.dispose();
  }
}

function explainMissingInstall(error: unknown, child: PlacedProcess, python: string): unknown {
  const tail = child.logTail();
  if (/failed to start .*ENOENT/.test(tail)) {
    return new ServelabError('NOT_INSTALLED', `SGLang is unavailable: the Python interpreter "${python}" was not found; install Python with SGLang, or point --python-executable at one; or add --target sim (target: sim in a config) to run the simulated engine instead`);
  }
  if (/No module named ['"]?sglang/.test(tail)) {
    return new ServelabError('NOT_INSTALLED', `SGLang is unavailable: "${python}" has no sglang module; install it (pip install "sglang[all]"), or add --target sim (target: sim in a config) to run the simulated engine instead`);
  }
  return error;
}
