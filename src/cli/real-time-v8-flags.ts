import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings for a real-time run's processes (client, router, taps, simulated servers), where a late wake-up is a
 * late send or a late token: on a small machine every thread of the process shares its core, so compiling or
 * collecting garbage on another thread delays the event loop.
 *
 * - Inlining: TurboFan may inline about an eighth of its defaults (460 bytes of bytecode per callee, 920 in all) into
 *   one optimised function. A run's hot path (pacer, HTTP/SSE client, record keeping, journal) is compiled while the
 *   arrivals already run, on V8's background threads; smaller optimised functions compile in far less time. Measured
 *   with `--trace-opt` on a 5,000-request run of the node-cli-targets bench (2 cores, client pinned to one): TurboFan
 *   time while arrivals ran fell from about 520 to 300 ms, and after the last answer (analysis and files) from 1,060 to
 *   520 ms; the client's CPU per request did not grow beyond the noise (see the bench).
 * - No memory reducer: it makes an isolate that allocates little (the timer thread, the metrics poller) run full
 *   mark-compacts of 4-15 ms from 8 s into a run, again and again, on the client's core (`--trace-gc`).
 *
 * Virtual-time runs keep V8's defaults: they are throughput-bound simulation loops, where inlining pays. The flags are
 * set from the CLI only (servelab as a library leaves the process's V8 alone), before the load starts: they apply to
 * every function optimised and every worker thread started afterwards.
 */
export const REAL_TIME_V8_FLAGS: readonly string[] = ['--max-inlined-bytecode-size=60', '--max-inlined-bytecode-size-cumulative=120', '--no-memory-reducer'];

export function applyRealTimeV8Flags(): void {
  for (const flag of REAL_TIME_V8_FLAGS) setFlagsFromString(flag);
}
