import { normalizeUrl } from '../analysis/node-index.js';
import type { ServerHandle } from '../types/cluster.js';
import type { RequestRecord } from '../types/record.js';

/**
 * Names each record's server machine (`hostNode`, the `host_node` column) from where servelab placed the servers:
 * a record whose `host` is a server's URL gets that server's node. Nothing when no server was placed on a named node
 * (one host), so single-host runs keep the column empty.
 */
export function nameHostNodes(records: Iterable<RequestRecord>, servers: readonly Pick<ServerHandle, 'url' | 'node'>[]): void {
  const nodeByUrl = new Map<string, string>();
  for (const server of servers) if (server.node !== undefined) nodeByUrl.set(normalizeUrl(server.url), server.node);
  if (nodeByUrl.size === 0) return;
  for (const record of records) {
    if (record.host === undefined) continue;
    const node = nodeByUrl.get(normalizeUrl(record.host));
    if (node !== undefined) record.hostNode = node;
  }
}
