import type { ProcessExit, ProcessPlacement } from '../../../types/cluster.js';
import { listenHostArgs } from '../../placement/listen-host.js';
import { localPlacement } from '../../placement/local/local-placement.js';
import { ServelabError } from '../../../errors/servelab-error.js';
import { servelabCliPath } from '../../process/cli-entry.js';

export interface LaunchedTaps {
  /** One URL per upstream, in the same order: give these to the router instead of the servers' own. */
  tapUrls: string[];
  /** Resolves when the taps process exits, however it ends. */
  exited: Promise<ProcessExit>;
  stop(): Promise<void>;
}

const LISTENING_LINE = /servelab taps listening (\[.*\])/;

/**
 * Starts the tracing taps (one listening port per server) in a process of their own: a tap's timestamp is only as
 * good as its event loop's promptness, so it must not share one with the load generator.
 */
export async function launchTaps(settings: { upstreamUrls: string[]; logPath?: string; readyTimeoutMs?: number; placement?: ProcessPlacement; node?: string }): Promise<LaunchedTaps> {
  const args = [servelabCliPath(), 'taps'];
  for (const url of settings.upstreamUrls) args.push('--upstream', url);
  const placement = settings.placement ?? localPlacement;
  args.push(...listenHostArgs(placement, settings.node));
  const child = placement.spawn({ name: 'taps', command: process.execPath, args, logPath: settings.logPath, stopGraceMs: 3_000, ...(settings.node === undefined ? {} : { node: settings.node }) });
  let tapUrls: string[];
  try {
    const [, json] = await child.waitForLine(LISTENING_LINE, settings.readyTimeoutMs ?? 20_000, 'start listening');
    tapUrls = JSON.parse(json ?? '[]') as string[];
  } catch (error) {
    await child.stop();
    throw error;
  }
  if (tapUrls.length !== settings.upstreamUrls.length) {
    await child.stop();
    throw new ServelabError('INTERNAL', `the taps process listed ${tapUrls.length} taps for ${settings.upstreamUrls.length} servers`);
  }
  return {
    tapUrls,
    exited: child.exited,
    stop: () => child.stop(),
  };
}
