import { Option, type Command } from 'commander';
import { systemClock } from '../../clock/clock.js';
import { loadRoutingPolicy } from '../../routing/policies/registry.js';
import { CONTROL_TOKEN_ENV, CONTROL_TOKEN_HEADER } from '../../routing/router/control-auth.js';
import { DEFAULT_MAX_RETRIES, startRouter, type RouterHandle } from '../../routing/router/index.js';
import { DEFAULT_BOOTSTRAP_PORT, type PdRouterSettings, type PrefillServer } from '../../routing/pd/pd-router.js';
import { ServelabError } from '../../errors/servelab-error.js';
import { TAP_RECORDS_PATH } from '../../routing/tap/index.js';
import { parseInteger } from '../options/option-table.js';
import { untilStopSignal } from '../stop-signal.js';
import { applyRealTimeV8Flags } from '../real-time-v8-flags.js';

export interface RouterCommandOptions {
  port: number;
  host: string;
  workerUrls?: string[];
  policy: string;
  maxRetries: number;
  seed: number;
  healthCheckIntervalMs: number;
  trace?: boolean;
  /** Prefill/decode disaggregation: requests go to a (prefill, decode) pair (src/routing/pd/). */
  pdDisaggregation?: boolean;
  /** PD: prefill servers, each `URL` or `URL,BOOTSTRAP_PORT` or `URL,none` (smg's `--prefill URL [PORT|none]`). */
  prefill?: string[];
  decode?: string[];
  prefillPolicy?: string;
  decodePolicy?: string;
}

/** `URL`, `URL,PORT` or `URL,none`: a prefill server and its bootstrap port (SGLang's default 8998 when absent). */
export function parsePrefillServer(text: string): PrefillServer {
  const [url, port] = text.split(',') as [string, string | undefined];
  if (port === undefined) return { url, bootstrapPort: DEFAULT_BOOTSTRAP_PORT };
  if (port === 'none') return { url, bootstrapPort: null };
  const parsed = Number(port);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 65535) {
    throw new ServelabError('INVALID_CONFIG', `bad bootstrap port in --prefill "${text}": give URL, URL,PORT (1-65535) or URL,none`);
  }
  return { url, bootstrapPort: parsed };
}

async function pdSettings(options: RouterCommandOptions): Promise<PdRouterSettings | undefined> {
  if (options.pdDisaggregation !== true) return undefined;
  const prefill = (options.prefill ?? []).map(parsePrefillServer);
  const decode = options.decode ?? [];
  if (prefill.length === 0 || decode.length === 0) {
    throw new ServelabError('INVALID_CONFIG', '--pd-disaggregation needs at least one --prefill URL and one --decode URL');
  }
  return {
    prefill,
    decode,
    // smg's defaults: each side's policy falls back to the main one.
    prefillPolicy: await loadRoutingPolicy(options.prefillPolicy ?? options.policy, { seed: options.seed }),
    decodePolicy: await loadRoutingPolicy(options.decodePolicy ?? options.policy, { seed: options.seed + 1 }),
  };
}

/** The line printed once the router listens; launchers wait for it (and read the URL from it). */
export const ROUTER_READY_PATTERN = /^servelab router listening on (http:\/\/\S+)$/;

/**
 * Starts the router for the command line: loads the policy, listens, prints the ready line. Returns the handle;
 * the caller decides when to close it (on a signal for the CLI, at the end for tests).
 */
export async function runRouterCommand(options: RouterCommandOptions, print: (line: string) => void): Promise<RouterHandle> {
  const policy = await loadRoutingPolicy(options.policy, { seed: options.seed });
  const pd = await pdSettings(options);
  if (pd === undefined && (options.workerUrls ?? []).length === 0) {
    throw new ServelabError('INVALID_CONFIG', 'give the servers to route to: --worker-urls URL..., or --pd-disaggregation with --prefill and --decode');
  }
  const handle = await startRouter({
    workerUrls: options.workerUrls ?? [],
    ...(pd === undefined ? {} : { pd }),
    policy,
    host: options.host,
    port: options.port,
    maxRetries: options.maxRetries,
    healthCheckIntervalMs: options.healthCheckIntervalMs,
    // From the environment only (servelab passes it there when it launches the router): never a flag, never printed.
    controlToken: process.env[CONTROL_TOKEN_ENV] || undefined,
    // stderr goes to the router's log file when servelab launches it.
    log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
    ...(options.trace === true ? { traceClock: systemClock } : {}),
  });
  print(`servelab router listening on ${handle.url}`);
  return handle;
}

export function registerRouterCommand(program: Command): void {
  program
    .command('router')
    .summary("servelab's builtin router in front of running servers")
    .description(
      [
        'Starts the builtin router: requests are proxied to a worker chosen by the policy, streamed through unchanged.',
        'Control endpoints: GET /health, GET /readiness, GET /workers, POST /workers {"url"}, DELETE /workers/{id},',
        'GET /metrics (Prometheus), POST /flush_cache. The worker and cache endpoints need the token of the environment',
        `variable ${CONTROL_TOKEN_ENV} in the ${CONTROL_TOKEN_HEADER} header (closed without it), and refuse browser`,
        'Origins and foreign Host headers; so do its /_servelab/ endpoints and the workers\' admin endpoints it would',
        'proxy (flush_cache, update_weights*, abort_request, ...), matched after decoding and normalising the path.',
        'Stops cleanly on SIGTERM or Ctrl-C.',
      ].join(' '),
    )
    .option('--worker-urls <url...>', 'base URLs of the servers to route to')
    .option('--pd-disaggregation', 'prefill/decode disaggregation: each request goes to a --prefill and a --decode server at once, with a bootstrap room, as smg does')
    .option('--prefill <server...>', 'PD: prefill servers, each URL, URL,BOOTSTRAP_PORT (default 8998) or URL,none')
    .option('--decode <url...>', 'PD: decode servers')
    .option('--prefill-policy <name>', "PD: policy choosing the prefill server (smg's; default: --policy)")
    .option('--decode-policy <name>', "PD: policy choosing the decode server (smg's; default: --policy)")
    .option('--port <port>', 'port to listen on (0 picks a free one)', parseInteger, 30000)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option(
      '--policy <name|path>',
      'cache_aware, round_robin, random, power_of_two, shortest_queue, least_load, prefix_hash, consistent_hashing, or a policy module path',
      'cache_aware',
    )
    .option('--max-retries <n>', 'retries on other workers when a worker does not answer', parseInteger, DEFAULT_MAX_RETRIES)
    .option('--seed <seed>', 'seed for random policies', parseInteger, 0)
    .option(
      '--trace',
      `keep, for every forwarded request, when it was sent and to which worker, served at ${TAP_RECORDS_PATH} like the tracing taps' records (servelab's routing tests turn it on instead of launching taps)`,
    )
    .addOption(
      new Option('--health-check-interval-ms <ms>', 'interval of /health checks of the workers').argParser(parseInteger).default(1_000),
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  servelab router --port 3001 --worker-urls http://127.0.0.1:30001 http://127.0.0.1:30002',
        '  servelab router --port 3001 --policy ./my-policy.js --worker-urls http://10.0.0.5:30000 http://10.0.0.6:30000',
      ].join('\n'),
    )
    .action(async (options: RouterCommandOptions) => {
      applyRealTimeV8Flags();
      const stopped = untilStopSignal();
      const handle = await runRouterCommand(options, (line) => process.stdout.write(`${line}
`));
      await stopped;
      await handle.close();
    });
}
