import { setTimeout as sleep } from 'node:timers/promises';
import { flushCacheOnce } from '../clients/common/flush-cache.js';
import { ServelabError } from '../errors/servelab-error.js';

/**
 * Empties the server's prefix cache before a run (`flushCacheOnce`). SGLang answers 400 while requests are still
 * running, so a few retries cover the tail of a previous run.
 */
export async function flushServerCache(baseUrl: string, attempts = 10): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if ((await flushCacheOnce(baseUrl)).statusCode === 200) return;
    await sleep(500);
  }
  throw new ServelabError('PROTOCOL_ERROR', `${baseUrl}/flush_cache did not succeed after ${attempts} attempts; the server may still be busy or may not support it (drop --flush-cache)`);
}
