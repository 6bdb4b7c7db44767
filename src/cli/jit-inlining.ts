import { setFlagsFromString } from 'node:v8';

/**
 * How much V8's optimising compiler (TurboFan) may inline into one function in a real-time run: about an eighth of its
 * defaults (460 bytes of bytecode per callee, 920 in all).
 *
 * Why: a run's hot path (pacer, HTTP/SSE client, record keeping, journal) is compiled while the arrivals already run,
 * on V8's background threads, which share the client's CPU on a small machine; every millisecond of compiling there is
 * a millisecond the pacer may send late. Smaller optimised functions compile in far less time. Measured with
 * `--trace-opt` on a 5,000-request run of the node-cli-targets bench (2 cores, client pinned to one): TurboFan time
 * while arrivals ran fell from about 520 to 300 ms, and after the last answer (analysis and files) from 1,060 to 520 ms;
 * the client's CPU per request did not grow beyond the noise (see the bench).
 *
 * Virtual-time runs keep V8's defaults: they are throughput-bound simulation loops, where inlining pays. The flags are
 * set from the CLI only (servelab as a library leaves the process's V8 alone), before the load starts, which is when
 * V8 reads them: they apply to every function optimised afterwards.
 */
export const REAL_TIME_INLINING_FLAGS: readonly string[] = ['--max-inlined-bytecode-size=60', '--max-inlined-bytecode-size-cumulative=120'];

export function limitInliningForRealTime(): void {
  for (const flag of REAL_TIME_INLINING_FLAGS) setFlagsFromString(flag);
}
