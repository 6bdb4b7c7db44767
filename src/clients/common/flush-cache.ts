import { request } from 'undici';
import type { Dispatcher } from 'undici';

/** What one server said to a flush: its HTTP status, or 0 and the error when it did not answer. */
export interface FlushCacheAnswer {
  statusCode: number;
  error?: string;
}

/**
 * Asks one SGLang server (or a sim-server, or a router) to empty its prefix cache, once: `POST /flush_cache`, then
 * `GET` where POST was refused or failed (SGLang's http_server.py has served the route under both methods, older
 * versions under GET only). A 400 means the server is busy (requests still running) and is returned at once; the caller
 * decides whether to retry. Never throws: a server that cannot be reached is an answer with status 0.
 *
 * The one flush_cache of the project: a node or routing test before its run (with retries), calibration between
 * points (best effort), and the builtin router's own `/flush_cache` (sent to every worker through its pool).
 */
export async function flushCacheOnce(baseUrl: string, dispatcher?: Dispatcher): Promise<FlushCacheAnswer> {
  const url = `${baseUrl.replace(/\/+$/, '')}/flush_cache`;
  let answer: FlushCacheAnswer = { statusCode: 0, error: 'not sent' };
  for (const method of ['POST', 'GET'] as const) {
    try {
      const response = await request(url, dispatcher === undefined ? { method } : { method, dispatcher });
      await response.body.dump();
      answer = { statusCode: response.statusCode };
    } catch (error) {
      answer = { statusCode: 0, error: (error as Error).message };
      continue;
    }
    if (answer.statusCode === 200 || answer.statusCode === 400) return answer;
  }
  return answer;
}
