import { request } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServelabError } from '../errors/servelab-error.js';

/**
 * Empties the server's prefix cache before a run (`POST /flush_cache`; older SGLang versions take GET). SGLang answers
 * 400 while requests are still running, so a few retries cover the tail of a previous run.
 */
export async function flushServerCache(baseUrl: string, attempts = 10): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    for (const method of ['POST', 'GET'] as const) {
      const response = await request(`${baseUrl}/flush_cache`, { method }).catch(() => undefined);
      if (response === undefined) continue;
      await response.body.dump();
      if (response.statusCode === 200) return;
      if (response.statusCode === 400) break;
    }
    await sleep(500);
  }
  throw new ServelabError('PROTOCOL_ERROR', `${baseUrl}/flush_cache did not succeed after ${attempts} attempts; the server may still be busy or may not support it (drop --flush-cache)`);
}
