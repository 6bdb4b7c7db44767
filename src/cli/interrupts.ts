/**
 * Turns the first Ctrl-C or SIGTERM into an abort of the run, so it stops sending, lets in-flight requests end as
 * `aborted` and writes what it measured. A second signal exits at once (launched servers are still killed by the
 * exit handler and the watchdog).
 */
export function abortOnSignals(onFirst?: (signal: NodeJS.Signals) => void): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  let received = 0;
  const handler = (signal: NodeJS.Signals): void => {
    received++;
    if (received === 1) {
      onFirst?.(signal);
      controller.abort(new Error(`received ${signal}`));
    } else {
      process.stderr.write(`\nservelab: ${signal} again: exiting now\n`);
      process.exit(130);
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
