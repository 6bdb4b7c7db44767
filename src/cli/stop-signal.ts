/**
 * Resolves on the first SIGTERM or SIGINT, for the long-running commands (sim-server, router, taps). Call it before
 * printing the ready line: a launcher may send SIGTERM the moment it reads that line, and a handler installed later
 * would miss it and let the process die without closing its server.
 */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve(signal);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
