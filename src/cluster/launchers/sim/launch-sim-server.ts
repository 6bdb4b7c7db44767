import type { EngineRole } from '../../../engine/disaggregation/engine-role.js';
import { ServelabError } from '../../../errors/servelab-error.js';
import { abortedPromise, launchInterrupted } from '../launch-abort.js';
import { launchedHandle } from '../launched-handle.js';
import type { ProcessPlacement, ServerHandle } from '../../../types/cluster.js';
import { listeningUrl } from '../../placement/listening-url.js';
import { listenHostArgs } from '../../placement/listen-host.js';
import { localPlacement } from '../../placement/local/local-placement.js';
import { servelabCliPath } from '../../process/cli-entry.js';

export interface SimServerLaunchSettings {
  name: string;
  logPath?: string;
  port?: number;
  profile?: string;
  maxRunningRequests?: number;
  maxTotalTokens?: number;
  chunkedPrefillSize?: number;
  schedulePolicy?: string;
  scheduleConservativeness?: number;
  disableRadixCache?: boolean;
  enableMixedChunk?: boolean;
  /** KV tokens per page (`--page-size`); absent, the engine's default. */
  pageSize?: number;
  /** Prefill/decode disaggregation: the server's role (`--disaggregation-mode`); co-located when absent. */
  role?: EngineRole;
  /** PD: the KV link (`--kv-transfer-bandwidth` as written, e.g. 25GB/s; `--kv-transfer-latency-ms`). */
  kvTransferBandwidth?: string;
  kvTransferLatencyMs?: number;
  seed?: number;
  readyTimeoutMs?: number;
  /** Where the process runs (default: this host). */
  placement?: ProcessPlacement;
  node?: string;
  /**
   * Aborts the launch: the process is stopped (its whole group) and the launch rejects with INTERRUPTED at once,
   * instead of waiting up to `readyTimeoutMs` for a server nobody wants any more (a Ctrl-C, or another server's failed start).
   */
  signal?: AbortSignal;
}

const LISTENING_LINE = /servelab sim-server listening on (http:\/\/\S+)/;
const READY_LINE = /The server is fired up and ready to roll!/;

/** The `servelab sim-server` flags for these settings (absent settings keep the engine's defaults). */
export function simServerArgs(settings: SimServerLaunchSettings): string[] {
  const args = ['sim-server', '--port', String(settings.port ?? 0)];
  const optional: [string, string | number | undefined][] = [
    ['--profile', settings.profile],
    ['--max-running-requests', settings.maxRunningRequests],
    ['--max-total-tokens', settings.maxTotalTokens],
    ['--chunked-prefill-size', settings.chunkedPrefillSize],
    ['--schedule-policy', settings.schedulePolicy],
    ['--schedule-conservativeness', settings.scheduleConservativeness],
    ['--page-size', settings.pageSize],
    ['--seed', settings.seed],
    ['--kv-transfer-bandwidth', settings.kvTransferBandwidth],
    ['--kv-transfer-latency-ms', settings.kvTransferLatencyMs],
  ];
  for (const [flag, value] of optional) if (value !== undefined) args.push(flag, String(value));
  if (settings.disableRadixCache === true) args.push('--disable-radix-cache');
  if (settings.enableMixedChunk === true) args.push('--enable-mixed-chunk');
  // Said only when the run said it: absent, the server takes a calibrated profile's own scheduling.
  if (settings.enableMixedChunk === false) args.push('--no-enable-mixed-chunk');
  if (settings.role === 'prefill' || settings.role === 'decode') args.push('--disaggregation-mode', settings.role);
  return args;
}

/**
 * Starts a simulated SGLang server as a child process. Port 0 lets the child bind any free port and print it, so
 * there is no race between choosing a port and binding it.
 */
export async function launchSimServer(settings: SimServerLaunchSettings): Promise<ServerHandle> {
  const { signal } = settings;
  if (signal?.aborted === true) throw launchInterrupted(settings.name);
  const placement = settings.placement ?? localPlacement;
  const child = placement.spawn({
    name: settings.name,
    ...(settings.node === undefined ? {} : { node: settings.node }),
    command: process.execPath,
    args: [servelabCliPath(), ...simServerArgs(settings), ...listenHostArgs(placement, settings.node)],
    logPath: settings.logPath,
    stopGraceMs: 3_000,
  });
  const timeoutMs = settings.readyTimeoutMs ?? 30_000;
  const aborted = abortedPromise(signal, settings.name);
  try {
    const ready = child.waitForLine(READY_LINE, timeoutMs, 'get ready');
    // Both waits fail together when the child exits early; the second failure is the same news, never unhandled.
    ready.catch(() => undefined);
    const url = await Promise.race([listeningUrl(child, LISTENING_LINE, timeoutMs), aborted.promise]);
    await Promise.race([ready, aborted.promise]);
    const port = Number(new URL(url).port);
    return {
      ...launchedHandle(settings.name, url, child, settings.node),
      // A restored node must come back on the same port: the router (or its tap) still points there.
      // A relaunch (a failure schedule's restore) is not the start-up the signal was for.
      relaunch: () => launchSimServer({ ...settings, port, signal: undefined }),
    };
  } catch (error) {
    await child.stop();
    if (/EADDRINUSE/.test(child.logTail())) {
      throw new ServelabError('PORT_IN_USE', `${settings.name} could not listen on port ${settings.port}: it is already in use; choose another port`);
    }
    throw error;
  } finally {
    aborted.dispose();
  }
}
