import { expect } from 'vitest';

/** Streamed requests that hold a simulated server's running slots until freed, one by one or all at once. */
export interface HeldSlots {
  /** Ends the i-th holder's request (its slot frees at the engine's next step). */
  free(index: number): void;
  /** Ends every holder and cancels their streams. */
  release(): Promise<void>;
}

/**
 * Sends one long streamed `/generate` per body and waits until each has streamed a token, so each is running: the
 * slots are then held, whatever this machine's speed, until `free` or `release`.
 */
export async function holdSlots(url: string, bodies: readonly Record<string, unknown>[]): Promise<HeldSlots> {
  const controllers = bodies.map(() => new AbortController());
  const readers = await Promise.all(
    bodies.map(async (body, index) => {
      const response = await fetch(`${url}/generate`, { method: 'POST', body: JSON.stringify({ ...body, stream: true }), signal: controllers[index]!.signal });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      await reader.read();
      return reader;
    }),
  );
  return {
    free: (index) => controllers[index]!.abort(),
    async release() {
      for (const controller of controllers) controller.abort();
      await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
    },
  };
}
