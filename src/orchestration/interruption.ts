import { ServelabError } from '../errors/servelab-error.js';

export function throwIfInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new ServelabError('INTERRUPTED', 'interrupted before any request was sent; nothing was measured');
}

/**
 * Rejects as soon as the run is interrupted while something is starting, and stops that thing once it has started
 * (so a Ctrl-C during a slow launch neither waits for it nor leaves it running).
 */
export async function raceAbort<T extends { stop(): Promise<void> }>(work: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      reject(new ServelabError('INTERRUPTED', `interrupted while ${what}; nothing was measured`));
      void work.then((started) => started.stop()).catch(() => undefined);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
