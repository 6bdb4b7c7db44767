import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { untilStopSignal } from '../stop-signal.js';
import { builtinProfileNames, DEFAULT_PROFILE_NAME } from '../../engine/profile/load-profile.js';
import { ENGINE_DEFAULTS } from '../../engine/create-engine.js';
import { startSimServer } from '../../engine/http/start-sim-server.js';
import type { EngineRole } from '../../engine/disaggregation/engine-role.js';
import { parseBandwidth } from '../../utils/parse-bandwidth.js';
import { DEFAULT_NUM_RESERVED_DECODE_TOKENS } from '../../engine/disaggregation/decode-prealloc.js';
import { KV_TRANSFER_DEFAULTS } from '../../engine/disaggregation/kv-transfer-link.js';
import { DEFAULT_BOOTSTRAP_TIMEOUT_MS, DEFAULT_KV_WAITING_TIMEOUT_MS } from '../../engine/disaggregation/pd-timeouts.js';
import { isServelabError } from '../../errors/servelab-error.js';
import { applyRealTimeV8Flags } from '../real-time-v8-flags.js';

/** SGLang's ready line; launchers wait for it. */
export const SGLANG_READY_LINE = 'The server is fired up and ready to roll!';

interface SimServerFlags {
  host: string;
  port: number;
  profile: string;
  maxRunningRequests?: number;
  chunkedPrefillSize?: number;
  maxTotalTokens?: number;
  contextLength?: number;
  schedulePolicy: string;
  scheduleConservativeness?: number;
  disableRadixCache?: boolean;
  enableMixedChunk?: boolean;
  pageSize?: number;
  seed: number;
  servedModelName?: string;
  enableCacheReport?: boolean;
  disaggregationMode: EngineRole;
  kvTransferBandwidth?: number;
  kvTransferLatencyMs?: number;
  numReservedDecodeTokens?: number;
  disaggregationWaitingTimeout?: number;
  disaggregationBootstrapTimeout?: number;
}

function integerOption(flag: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(parsed) || parsed < minimum || parsed > maximum) {
      const range = maximum === Number.MAX_SAFE_INTEGER ? `>= ${minimum}` : `from ${minimum} to ${maximum}`;
      throw new InvalidArgumentError(`${flag} must be an integer ${range}, got "${value}".`);
    }
    return parsed;
  };
}

function positiveNumberOption(flag: string) {
  return (value: string): number => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed) || parsed <= 0) {
      throw new InvalidArgumentError(`${flag} must be a positive number, got "${value}".`);
    }
    return parsed;
  };
}

/** SGLang's `--disaggregation-mode`: `null` (its default, co-located), `prefill` or `decode`. */
function disaggregationModeOption(value: string): EngineRole {
  if (value === 'null') return 'colocated';
  if (value === 'prefill' || value === 'decode') return value;
  throw new InvalidArgumentError(`--disaggregation-mode must be null, prefill or decode (SGLang's values), got "${value}".`);
}

function bandwidthOption(value: string): number {
  try {
    return parseBandwidth(value);
  } catch (error) {
    throw new InvalidArgumentError(isServelabError(error) ? error.message : String(error));
  }
}

function nonNegativeNumberOption(flag: string) {
  return (value: string): number => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed) || parsed < 0) throw new InvalidArgumentError(`${flag} must be zero or a positive number, got "${value}".`);
    return parsed;
  };
}

function policyOption(value: string): string {
  if (value === 'fcfs' || value === 'lpm' || value.includes('/') || /\.(m?js|cjs)$/.test(value)) return value;
  throw new InvalidArgumentError(
    `--schedule-policy must be fcfs, lpm, or the path of a policy module (e.g. ./my-policy.mjs), got "${value}".`,
  );
}

/** `servelab sim-server`: a simulated SGLang server on a real port, for other tools (or servelab) to load. */
export function registerSimServerCommand(program: Command): void {
  program
    .command('sim-server')
    .description(
      'Run a simulated SGLang server: the same HTTP API (/generate, /v1/completions, /v1/chat/completions, /metrics, ' +
        '...), with the GPU replaced by a cost model, so queueing, batching, chunked prefill and the prefix cache behave ' +
        'like a real server without a GPU.',
    )
    // Bad values must exit with code 2 through the main error handler, whatever the parent's settings.
    .exitOverride()
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free port and prints it)', integerOption('--port', 0, 65535), 30000)
    .option(
      '--profile <name|file>',
      `cost-model profile: a built-in name, a profile JSON file, or '{"kind":"simple","stepMs":10}'`,
      DEFAULT_PROFILE_NAME,
    )
    .option(
      '--max-running-requests <n>',
      `most requests decoding together (default ${ENGINE_DEFAULTS.maxRunningRequests})`,
      integerOption('--max-running-requests', 1),
    )
    .option(
      '--chunked-prefill-size <n>',
      `most prompt tokens prefilled per step; longer prompts are split over steps; -1 disables (default ${ENGINE_DEFAULTS.chunkedPrefillSize})`,
      integerOption('--chunked-prefill-size', -1),
    )
    .option('--max-total-tokens <n>', 'KV cache capacity in tokens (default: the profile\'s)', integerOption('--max-total-tokens', 1))
    .option('--context-length <n>', 'longest prompt + output (default: the profile\'s)', integerOption('--context-length', 2))
    .option('--schedule-policy <policy>', 'waiting-queue order: fcfs, lpm (longest cached prefix first) or a module path', policyOption, 'fcfs')
    .option(
      '--schedule-conservativeness <x>',
      'scales the KV room reserved for future decode tokens when admitting (SGLang default 1.0; higher admits fewer)',
      positiveNumberOption('--schedule-conservativeness'),
    )
    .option('--disable-radix-cache', 'turn the prefix cache off (every prompt token is prefilled)')
    .option(
      '--enable-mixed-chunk',
      "prefill steps also decode the running batch, whose tokens count against --chunked-prefill-size (SGLang's flag; default: a calibrated profile's scheduling, else off)",
    )
    .option('--no-enable-mixed-chunk', 'prefill steps apart from decode steps even where a calibrated profile says its server mixes them')
    .option(
      '--page-size <tokens>',
      "KV tokens per page, SGLang's --page-size: KV is allocated in whole pages, a chunk cut by --chunked-prefill-size (itself whole pages, as SGLang requires) ends on a page boundary, and the prefix cache reuses whole pages (default: a calibrated profile's, else 1)",
      integerOption('--page-size', 1),
    )
    .option('--seed <seed>', 'seed for generated tokens', integerOption('--seed', 0), 0)
    .option('--served-model-name <name>', 'model name the API reports (default: the profile\'s model)')
    .option(
      '--disaggregation-mode <mode>',
      "null (co-located, the default), prefill or decode, as SGLang's flag: a prefill or decode server refuses a request without bootstrap_room (400), and a decode server keeps no radix cache",
      disaggregationModeOption,
      'colocated',
    )
    .option(
      '--kv-transfer-bandwidth <rate>',
      `PD: the KV link's bandwidth, shared by the transfers in flight, e.g. 25GB/s or 200Gbit/s (default: the profile's kvTransfer, else ${KV_TRANSFER_DEFAULTS.bandwidthBytesPerSecond / 1e9}GB/s, an assumption)`,
      bandwidthOption,
    )
    .option(
      '--kv-transfer-latency-ms <ms>',
      `PD: fixed time each KV transfer adds (default: the profile's kvTransfer, else ${KV_TRANSFER_DEFAULTS.latencyMs} ms, an assumption)`,
      nonNegativeNumberOption('--kv-transfer-latency-ms'),
    )
    .option(
      '--num-reserved-decode-tokens <n>',
      `PD decode server: KV kept free per request for its coming decode tokens when preallocating (SGLang's flag, default ${DEFAULT_NUM_RESERVED_DECODE_TOKENS})`,
      integerOption('--num-reserved-decode-tokens', 0),
    )
    .option(
      '--disaggregation-waiting-timeout <seconds>',
      `PD decode server: how long a request with its KV space reserved waits for the KV before it fails with a 500, as SGLang's SGLANG_DISAGGREGATION_WAITING_TIMEOUT (default ${DEFAULT_KV_WAITING_TIMEOUT_MS / 1000} s, SGLang's)`,
      positiveNumberOption('--disaggregation-waiting-timeout'),
    )
    .option(
      '--disaggregation-bootstrap-timeout <seconds>',
      `PD prefill server: how long a request waits for its decode server to say where to send the KV before it fails with a 500, as SGLang's SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT (default ${DEFAULT_BOOTSTRAP_TIMEOUT_MS / 1000} s, SGLang's)`,
      positiveNumberOption('--disaggregation-bootstrap-timeout'),
    )
    .option('--enable-cache-report', 'report cached prompt tokens in OpenAI usage (prompt_tokens_details), as SGLang does only with this flag')
    .addHelpText(
      'after',
      () =>
        [
          '',
          `Built-in profiles: ${safeProfileNames()}.`,
          'Each step is a prefill batch (new prompts, chunked at --chunked-prefill-size) or a decode batch (one token for',
          'every running request); with --enable-mixed-chunk a prefill step also decodes the running batch. Steps are',
          'timed by the profile; tokens stream at step boundaries, so TTFT and inter-token gaps',
          'show batching and load. Responses carry the --enable-metrics timing keys (forward_entry_time, ...).',
          '',
          'Example:',
          '  servelab sim-server --port 30000 --max-running-requests 64 --profile llama-3-8b-h100',
          '  curl -N localhost:30000/generate -d \'{"text":"hello","sampling_params":{"max_new_tokens":8},"stream":true}\'',
        ].join('\n'),
    )
    .action(async (flags: SimServerFlags) => {
      applyRealTimeV8Flags();
      const server = await startSimServer({
        host: flags.host,
        port: flags.port,
        profile: flags.profile,
        maxRunningRequests: flags.maxRunningRequests,
        chunkedPrefillSize: flags.chunkedPrefillSize,
        maxTotalTokens: flags.maxTotalTokens,
        contextLength: flags.contextLength,
        schedulePolicy: flags.schedulePolicy,
        scheduleConservativeness: flags.scheduleConservativeness,
        disableRadixCache: flags.disableRadixCache === true,
        // Absent: a calibrated profile's own scheduling, else off.
        ...(flags.enableMixedChunk === undefined ? {} : { enableMixedChunk: flags.enableMixedChunk }),
        ...(flags.pageSize === undefined ? {} : { pageSize: flags.pageSize }),
        seed: flags.seed,
        servedModelName: flags.servedModelName,
        enableCacheReport: flags.enableCacheReport === true,
        role: flags.disaggregationMode,
        pd: {
          ...(flags.kvTransferBandwidth === undefined ? {} : { kvTransferBandwidthBytesPerSecond: flags.kvTransferBandwidth }),
          ...(flags.kvTransferLatencyMs === undefined ? {} : { kvTransferLatencyMs: flags.kvTransferLatencyMs }),
          ...(flags.numReservedDecodeTokens === undefined ? {} : { numReservedDecodeTokens: flags.numReservedDecodeTokens }),
          ...(flags.disaggregationWaitingTimeout === undefined ? {} : { kvWaitingTimeoutMs: flags.disaggregationWaitingTimeout * 1000 }),
          ...(flags.disaggregationBootstrapTimeout === undefined ? {} : { bootstrapTimeoutMs: flags.disaggregationBootstrapTimeout * 1000 }),
        },
      });
      // Handlers first: a launcher may send SIGTERM the moment it reads the ready line.
      const stopped = untilStopSignal().then(() => server.close().catch(() => undefined));
      process.stdout.write(`servelab sim-server listening on ${server.url}\n`);
      process.stdout.write(`${SGLANG_READY_LINE}\n`);
      await stopped;
    });
}

function safeProfileNames(): string {
  try {
    return builtinProfileNames().join(', ');
  } catch {
    return DEFAULT_PROFILE_NAME;
  }
}
