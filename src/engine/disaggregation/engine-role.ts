/**
 * What a simulated server does in prefill/decode (PD) disaggregation, as SGLang's `--disaggregation-mode`:
 * `colocated` (SGLang's `null`, the default) prefills and decodes; `prefill` computes a prompt's KV cache and sends it
 * to a decode server; `decode` receives it and generates the output.
 */
export type EngineRole = 'colocated' | 'prefill' | 'decode';

export const ENGINE_ROLES: readonly EngineRole[] = ['colocated', 'prefill', 'decode'];

/**
 * The room a PD request carries, or undefined when it has none. SGLang's scheduler refuses, with a 400, any request
 * without `bootstrap_room` on a server in either disaggregation mode, prefill as well as decode (the check on
 * `recv_req.bootstrap_room is None` when `disaggregation_mode != NULL`, python/sglang/srt/managers/scheduler.py; only
 * the `fake` transfer backend is exempt). A JSON null counts as absent there too.
 */
export function bootstrapRoomOf(body: Record<string, unknown>): unknown {
  const room = body['bootstrap_room'];
  return room === null ? undefined : room;
}

/** SGLang's message for that refusal (scheduler.py), with the request id as it prints it. */
export function missingBootstrapRoomMessage(requestId: string): string {
  return `Invalid request: Disaggregated request received without bootstrap room id. req.rid='${requestId}'`;
}

/**
 * Whether a server in this role keeps a radix (prefix) cache. A decode server has none by default: prefix reuse
 * happens on the prefill server, whose cache the prompt is computed against (SGLang's decode server only enables one
 * with `--disaggregation-decode-enable-radix-cache`, python/sglang/srt/server_args.py, which the sim does not model).
 */
export function roleKeepsRadixCache(role: EngineRole): boolean {
  return role !== 'decode';
}
