import type { RequestRecord } from '../types/record.js';
import type { RunData } from '../types/run.js';

/**
 * The node index a `--failure-schedule` names (0-based, the order servelab launched or was given the servers in) for
 * each server URL of a routing run, from `extras.cluster.serverUrls`. Records name their server by URL (`host`), events
 * by index: this joins the two.
 */
export function nodeUrlsOf(run: Pick<RunData, 'extras'>): readonly string[] | undefined {
  const cluster = run.extras?.['cluster'] as { serverUrls?: unknown } | undefined;
  const urls = cluster?.serverUrls;
  return Array.isArray(urls) && urls.every((url) => typeof url === 'string') ? urls.map(normalizeUrl) : undefined;
}

/**
 * The machine each server ran on by name (a Slurm node), in the order of `nodeUrlsOf`, from `extras.cluster.serverNodes`;
 * undefined when the servers ran on the host that ran servelab.
 */
export function nodeNamesOf(run: Pick<RunData, 'extras'>): readonly (string | null)[] | undefined {
  const cluster = run.extras?.['cluster'] as { serverNodes?: unknown } | undefined;
  const names = cluster?.serverNodes;
  return Array.isArray(names) && names.every((name) => name === null || typeof name === 'string') ? (names as (string | null)[]) : undefined;
}

/** URLs compare without a trailing slash. */
export function normalizeUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The index of the node a URL names, or null when the run's cluster does not list it. */
export function nodeIndexOf(host: string, nodeUrls: readonly string[] | undefined): number | null {
  if (nodeUrls === undefined) return null;
  const index = nodeUrls.indexOf(normalizeUrl(host));
  return index < 0 ? null : index;
}

/**
 * The records a node served or was chosen for: their `host` is its URL, or, for a PD request, their `prefillHost` (a
 * prefill server never answers the client, so it is never a record's `host`; the requests it prefilled are its own).
 */
export function recordsOfNode(records: readonly RequestRecord[], url: string): RequestRecord[] {
  const wanted = normalizeUrl(url);
  return records.filter(
    (record) => (record.host !== undefined && normalizeUrl(record.host) === wanted) || (record.prefillHost !== undefined && normalizeUrl(record.prefillHost) === wanted),
  );
}
