import { request } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';

/** One GET; true when it answers 200 within `timeoutMs`. Never throws. */
export async function answersOk(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const response = await request(url, { method: 'GET', headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    await response.body.dump();
    return response.statusCode === 200;
  } catch {
    return false;
  }
}

/**
 * Polls `url` until it answers 200, `isStillAlive` turns false, or `timeoutMs` passes. Resolves true once healthy.
 */
export async function pollUntilHealthy(
  url: string,
  timeoutMs: number,
  isStillAlive: () => boolean = () => true,
  intervalMs = 200,
): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline && isStillAlive()) {
    if (await answersOk(url)) return true;
    await sleep(intervalMs);
  }
  return false;
}
