/**
 * Turns the first Ctrl-C or SIGTERM into an abort of the run, so it stops sending, lets in-flight requests end as
 * `aborted` and writes what it measured. A second signal exits at once (launched servers are still killed by the
 * exit handler and the watchdog).
 */
export function abortOnSignals(onFirst?: (signal: NodeJS.Signals) => void): { signal: AbortSignal; received(): NodeJS.Signals | undefined; dispose(): void } {
  const controller = new AbortController();
  let received = 0;
  let first: NodeJS.Signals | undefined;
  const handler = (signal: NodeJS.Signals): void => {
    received++;
    if (received === 1) {
      first = signal;
      onFirst?.(signal);
      controller.abort(new Error(`received ${signal}`));
    } else {
      process.stderr.write(`\nservelab: ${signal} again: exiting now\n`);
      process.exit(exitCodeFor(signal));
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    received: () => first,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

/** The shell's convention: 128 + the signal's number (130 for SIGINT, 143 for SIGTERM). */
export function exitCodeFor(signal: NodeJS.Signals | undefined): number {
  return signal === 'SIGTERM' ? 143 : 130;
}
