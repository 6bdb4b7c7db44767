import { parsePrefillUrl } from '../config/routing-test-config.js';
import type { RoutingTestConfig } from '../config/schema.js';

/** SGLang's default `--disaggregation-bootstrap-port` (server_args.py, `disaggregation_bootstrap_port: int = 8998`). */
export const SGLANG_DEFAULT_BOOTSTRAP_PORT = 8998;

/** A PD run's servers as its router is told them: prefill servers with their bootstrap ports, then decode servers. */
export interface PdServers {
  /** `bootstrapPort` null: the server has none (smg's `none`), so the router injects a null `bootstrap_port`. */
  prefill: { url: string; bootstrapPort: number | null }[];
  decode: string[];
}

/**
 * The prefill server `index`'s bootstrap port: a launched SGLang server's own (`--disaggregation-bootstrap-port`, the
 * first's + index so that prefill servers sharing a host never collide), an attached one's as given. A simulated
 * prefill server serves its bootstrap endpoint on its HTTP port (src/engine/http/pd-http.ts): pdServers gives that
 * port, read from the server's own URL (not a tap's: the decode server reaches its prefill server directly, as SGLang's
 * do over their bootstrap port); here it is null.
 */
export function prefillBootstrapPort(config: RoutingTestConfig, index: number): number | null {
  if (config.target === 'sglang') return (config.disaggregationBootstrapPort ?? SGLANG_DEFAULT_BOOTSTRAP_PORT) + index;
  if (config.target === 'attach') {
    const given = config.prefillUrls?.[index];
    return given === undefined ? null : parsePrefillUrl(given).bootstrapPort;
  }
  return null;
}

/**
 * Splits the URLs a router is put in front of (the servers', or their taps') into the PD roles: the first numPrefill
 * prefill, the rest decode, in the order the targets launch them (sim-target.ts, sglang-target.ts, attach-target.ts).
 */
export function pdServers(config: RoutingTestConfig, workerUrls: readonly string[], serverUrls: readonly string[] = workerUrls): PdServers {
  const numPrefill = config.numPrefill ?? 1;
  return {
    prefill: workerUrls.slice(0, numPrefill).map((url, index) => ({
      url,
      bootstrapPort: config.target === 'sim' ? Number(new URL(serverUrls[index] ?? url).port) : prefillBootstrapPort(config, index),
    })),
    decode: workerUrls.slice(numPrefill),
  };
}

/** Whether server `index` of a PD run is a prefill server. */
export function isPrefillIndex(config: Pick<RoutingTestConfig, 'numPrefill'>, index: number): boolean {
  return index < (config.numPrefill ?? 1);
}
