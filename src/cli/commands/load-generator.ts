import { InvalidArgumentError, type Command } from 'commander';
import { systemClock } from '../../clock/clock.js';
import { startGeneratorService } from '../../load/generator-process/generator-service.js';
import { CONTROL_TOKEN_ENV } from '../../routing/router/control-auth.js';
import { applyRealTimeV8Flags } from '../real-time-v8-flags.js';
import { untilStopSignal } from '../stop-signal.js';

interface LoadGeneratorFlags {
  host: string;
  port: number;
  advertisedHost?: string;
}

function portOption(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || port > 65_535) throw new InvalidArgumentError(`--port must be an integer from 0 to 65535, got "${value}".`);
  return port;
}

/**
 * `servelab load-generator`: one load generator of a run spread over processes or hosts (`--client-nodes`). A run
 * starts it through its placement; it is driven over HTTP by the run (src/load/generator-process/generator-protocol.ts).
 */
export function registerLoadGeneratorCommand(program: Command): void {
  program
    .command('load-generator')
    .summary('one load generator process of a run with --client-nodes (started by servelab itself)')
    .description(
      [
        'A load generator that a servelab run (--client-nodes N) starts on each client node and drives over HTTP: clock',
        'exchanges, its slice of the run\'s one schedule, a stream of its records, abort. It prints the line',
        '"servelab load-generator listening on URL" once it listens. Every endpoint needs the token in the environment',
        `variable ${CONTROL_TOKEN_ENV} (closed without it). Stops on SIGTERM or Ctrl-C. See docs/load-generators.md.`,
      ].join('\n'),
    )
    .option('--host <host>', 'address to listen on (the node\'s address, or 0.0.0.0 for every interface)', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 picks a free one', portOption, 0)
    .option('--advertised-host <name>', 'the name the run reaches this host by, when it is a name rather than an address (accepted in the Host header)')
    .action(async (flags: LoadGeneratorFlags) => {
      applyRealTimeV8Flags();
      const stopped = untilStopSignal();
      const token = process.env[CONTROL_TOKEN_ENV];
      const service = await startGeneratorService({
        host: flags.host,
        port: flags.port,
        ...(flags.advertisedHost === undefined ? {} : { advertisedHost: flags.advertisedHost }),
        controlToken: token === '' ? undefined : token,
        clock: systemClock,
        onOrphaned: () => {
          process.stderr.write('servelab load-generator: no word from the run for 60 s (its coordinator is gone?); stopping\n');
          process.kill(process.pid, 'SIGTERM');
        },
      });
      process.stdout.write(`servelab load-generator listening on ${service.url}\n`);
      await stopped;
      await service.close();
    });
}
