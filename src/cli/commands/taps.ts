import type { Command } from 'commander';
import { untilStopSignal } from '../stop-signal.js';
import { systemClock } from '../../clock/clock.js';
import { startTaps, TAP_RECORDS_PATH, type TapsHandle } from '../../routing/tap/index.js';
import { applyRealTimeV8Flags } from '../real-time-v8-flags.js';

export interface TapsCommandOptions {
  upstream: string[];
  host: string;
}

/** Starts the taps for the command line and prints the ready line with the tap URLs as a JSON array. */
export async function runTapsCommand(options: TapsCommandOptions, print: (line: string) => void): Promise<TapsHandle> {
  const handle = await startTaps({ upstreamUrls: options.upstream, host: options.host, clock: systemClock });
  print(`servelab taps listening ${JSON.stringify(handle.tapUrls)}`);
  return handle;
}

export function registerTapsCommand(program: Command): void {
  program
    .command('taps')
    .summary('tracing taps: transparent proxies in front of servers that record when the router forwarded each request')
    .description(
      [
        'Starts one tracing tap per upstream server, all in this process. Point the router at the printed tap URLs',
        'instead of the servers. Each request carrying x-request-id (or rid) is recorded with the instant it reached the',
        `tap (router_send_time) and the server behind it (host). GET ${TAP_RECORDS_PATH} on the first tap's port returns`,
        'the records and the taps\' own overhead; DELETE clears them. Both need the token of the environment variable',
        'SERVELAB_ROUTER_CONTROL_TOKEN in the x-servelab-control-token header (closed without it). Stops on SIGTERM or Ctrl-C.',
      ].join('\n'),
    )
    .requiredOption('--upstream <url...>', 'base URL of a server to front (repeat, or list several)')
    .option('--host <host>', 'address the taps listen on', '127.0.0.1')
    .action(async (options: TapsCommandOptions) => {
      applyRealTimeV8Flags();
      const stopped = untilStopSignal();
      const handle = await runTapsCommand(options, (line) => process.stdout.write(`${line}
`));
      await stopped;
      await handle.close();
    });
}
