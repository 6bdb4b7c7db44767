import { request } from 'undici';

/**
 * Whether a router's `GET /workers` lists at least `expected` workers, all healthy. sglang-router 0.3.x and smg answer
 * `{"workers": [{..., "is_healthy": bool}]}`, servelab's builtin router `{"workers": [{..., "healthy": bool}]}`; a
 * version without health fields counts as healthy once it lists them all.
 */
export async function allWorkersHealthy(url: string, expected: number): Promise<boolean> {
  try {
    const response = await request(`${url}/workers`, { method: 'GET', headersTimeout: 2_000, bodyTimeout: 2_000 });
    if (response.statusCode !== 200) {
      await response.body.dump();
      return false;
    }
    const body = (await response.body.json()) as { workers?: { healthy?: boolean; is_healthy?: boolean }[] } | unknown[];
    const workers = (Array.isArray(body) ? body : (body.workers ?? [])) as { healthy?: boolean; is_healthy?: boolean }[];
    if (workers.length < expected) return false;
    return workers.every((worker) => (worker.healthy ?? worker.is_healthy ?? true) === true);
  } catch {
    return false;
  }
}
