import type { RoutingPolicy, RoutingRequest, WorkerState } from '../../types/routing.js';

/** The two servers of one PD request. */
export interface PdPair {
  prefill: WorkerState;
  decode: WorkerState;
}

/**
 * smg's policy names for PD mode: `--prefill-policy` and `--decode-policy` each default to the main `--policy`
 * (itself `cache_aware` by default) when left out (smg's CLI, model_gateway/src/main.rs: "Specific policy for prefill
 * nodes in PD mode"; sglang-router's launch_router documents the same fallback).
 */
export interface PdPolicyNames {
  prefillPolicy: string;
  decodePolicy: string;
}

export function pdPolicyNames(mainPolicy: string, prefillPolicy?: string, decodePolicy?: string): PdPolicyNames {
  return { prefillPolicy: prefillPolicy ?? mainPolicy, decodePolicy: decodePolicy ?? mainPolicy };
}

/**
 * Picks the pair for one request: the prefill policy over the prefill servers, the decode policy over the decode
 * servers, each on its own, as smg's `select_pd_pair` does. Undefined when either side has no eligible server.
 */
export function choosePdPair(
  request: RoutingRequest,
  prefillPolicy: RoutingPolicy,
  prefillWorkers: readonly WorkerState[],
  decodePolicy: RoutingPolicy,
  decodeWorkers: readonly WorkerState[],
): PdPair | undefined {
  const prefill = prefillPolicy.choose(request, prefillWorkers);
  if (prefill === undefined) return undefined;
  const decode = decodePolicy.choose(request, decodeWorkers);
  if (decode === undefined) return undefined;
  return { prefill, decode };
}
