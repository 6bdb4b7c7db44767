import { request } from 'undici';
import { ServelabError } from '../../../errors/servelab-error.js';
import type { ServerHandle } from '../../../types/cluster.js';

/**
 * Uses a server or router that already runs. It must answer HTTP at all (any status: an OpenAI-compatible server may
 * lack `/health`); a refused or silent address stops the run before any load is sent.
 */
export async function attachServer(url: string, name = url, timeoutMs = 5_000): Promise<ServerHandle> {
  const baseUrl = url.replace(/\/+$/, '');
  try {
    const response = await request(`${baseUrl}/health`, { method: 'GET', headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    await response.body.dump();
  } catch (error) {
    const reason = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error);
    throw new ServelabError('UNREACHABLE', `cannot reach ${baseUrl} (${reason}); check that the server runs and the URL (host and port) is right`, { cause: error });
  }
  return { name, url: baseUrl, stop: async () => undefined };
}
