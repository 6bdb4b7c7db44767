import { request } from 'undici';
import { CONTROL_TOKEN_HEADER } from '../../routing/router/control-auth.js';

/** What a failure schedule needs from a router to drain a worker and take it back. */
export interface RouterControl {
  removeWorker(workerUrl: string): Promise<void>;
  addWorker(workerUrl: string): Promise<void>;
}

/**
 * Worker management through the HTTP API that servelab's builtin router, smg and sglang-router share: `GET /workers`
 * lists them (`{"workers": [{"id", "url", ...}]}`), `DELETE /workers/{id}` removes one, `POST /workers {"url"}` adds
 * one (smg answers 202 and adds it in the background).
 */
export function httpRouterControl(routerUrl: string, controlToken?: string): RouterControl {
  // servelab's builtin router requires its per-run token (routing/router/control-auth.ts); sglang-router ignores it.
  const auth: Record<string, string> = controlToken === undefined ? {} : { [CONTROL_TOKEN_HEADER]: controlToken };
  return {
    async removeWorker(workerUrl) {
      const listing = await request(`${routerUrl}/workers`, { method: 'GET', headers: auth });
      const body = (await listing.body.json()) as { workers?: WorkerEntry[] } | WorkerEntry[];
      const workers = Array.isArray(body) ? body : (body.workers ?? []);
      const entry = workers.find((worker) => worker.url === workerUrl);
      const id = entry?.id ?? entry?.worker_id ?? encodeURIComponent(workerUrl);
      const response = await request(`${routerUrl}/workers/${encodeURIComponent(String(id))}`, { method: 'DELETE', headers: auth });
      await response.body.dump();
      if (response.statusCode >= 300) throw new Error(`the router answered ${response.statusCode} to removing ${workerUrl}`);
    },
    async addWorker(workerUrl) {
      const response = await request(`${routerUrl}/workers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ url: workerUrl }),
      });
      await response.body.dump();
      if (response.statusCode >= 300) throw new Error(`the router answered ${response.statusCode} to adding ${workerUrl}`);
    },
  };
}

interface WorkerEntry {
  url?: string;
  id?: string | number;
  worker_id?: string | number;
}
