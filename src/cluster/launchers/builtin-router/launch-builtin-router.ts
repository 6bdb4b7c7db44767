import { ServelabError } from '../../../errors/servelab-error.js';
import type { ProcessPlacement, ServerHandle } from '../../../types/cluster.js';
import { listeningUrl } from '../../placement/listening-url.js';
import { listenHostArgs } from '../../placement/listen-host.js';
import { localPlacement } from '../../placement/local/local-placement.js';
import { CONTROL_TOKEN_ENV, runControlToken } from '../../../routing/router/control-auth.js';
import { servelabCliPath } from '../../process/cli-entry.js';

export interface BuiltinRouterSettings {
  workerUrls: string[];
  policy: string;
  port?: number;
  maxRetries?: number;
  seed?: number;
  logPath?: string;
  readyTimeoutMs?: number;
  /** Trace every forwarded request (`servelab router --trace`): the run then needs no tracing taps. */
  trace?: boolean;
  /** Where the process runs (default: this host). */
  placement?: ProcessPlacement;
  node?: string;
  /** Prefill/decode disaggregation (`servelab router --pd-disaggregation`): `workerUrls` is then ignored. */
  pd?: { prefillUrls: string[]; decodeUrls: string[]; prefillPolicy: string; decodePolicy: string };
}

const LISTENING_LINE = /servelab router listening on (http:\/\/\S+)/;

/** A launched builtin router and the token its control endpoints require (hand it only to servelab's own code). */
export interface LaunchedBuiltinRouter {
  handle: ServerHandle;
  controlToken: string;
}

/**
 * Starts servelab's own router in its own process, so its event loop never competes with the load generator's. Its
 * control token is made here and given to the child in its environment: never on its command line (which its log
 * and `ps` show), never printed.
 */
export async function launchBuiltinRouter(settings: BuiltinRouterSettings): Promise<LaunchedBuiltinRouter> {
  // The run's token (not one of its own): the trace at /_servelab/tap-records is fetched with it, like the taps'.
  const controlToken = runControlToken();
  const args = [servelabCliPath(), 'router', '--port', String(settings.port ?? 0), '--policy', settings.policy];
  if (settings.pd === undefined) args.push('--worker-urls', ...settings.workerUrls);
  else {
    args.push('--pd-disaggregation', '--prefill-policy', settings.pd.prefillPolicy, '--decode-policy', settings.pd.decodePolicy);
    args.push('--prefill', ...settings.pd.prefillUrls, '--decode', ...settings.pd.decodeUrls);
  }
  if (settings.maxRetries !== undefined) args.push('--max-retries', String(settings.maxRetries));
  if (settings.seed !== undefined) args.push('--seed', String(settings.seed));
  if (settings.trace === true) args.push('--trace');
  const placement = settings.placement ?? localPlacement;
  args.push(...listenHostArgs(placement, settings.node));
  const child = placement.spawn({
    name: 'router',
    ...(settings.node === undefined ? {} : { node: settings.node }),
    command: process.execPath,
    args,
    env: { [CONTROL_TOKEN_ENV]: controlToken },
    logPath: settings.logPath,
    stopGraceMs: 3_000,
  });
  try {
    const url = await listeningUrl(child, LISTENING_LINE, settings.readyTimeoutMs ?? 20_000);
    return {
      handle: { name: 'router', url, pid: child.pid, logPath: child.logPath, exited: child.exited, stop: () => child.stop(), signal: (signal) => child.signal(signal) },
      controlToken,
    };
  } catch (error) {
    await child.stop();
    if (/EADDRINUSE/.test(child.logTail())) {
      throw new ServelabError('PORT_IN_USE', `the router could not listen on port ${settings.port}: it is already in use; choose another --router-port`);
    }
    throw error;
  }
}
