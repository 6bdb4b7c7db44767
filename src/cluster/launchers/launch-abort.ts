import { ServelabError } from '../../errors/servelab-error.js';

/** The error a launch rejects with when the run's signal (Ctrl-C, a failed sibling launch) aborts it. */
export function launchInterrupted(name: string): ServelabError {
  return new ServelabError('INTERRUPTED', `interrupted while ${name} was starting; nothing was measured`);
}

/**
 * A promise that rejects when `signal` aborts (never otherwise), to race against a launch's readiness, and the way to
 * stop listening once the launch is over. Why: a launch that waits out its readiness (a model load takes minutes)
 * before it looks at the signal would keep a Ctrl-C waiting that long.
 */
export function abortedPromise(signal: AbortSignal | undefined, name: string): { promise: Promise<never>; dispose(): void } {
  if (signal === undefined) return { promise: new Promise<never>(() => undefined), dispose: () => undefined };
  let onAbort = (): void => undefined;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(launchInterrupted(name));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  promise.catch(() => undefined);
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}
