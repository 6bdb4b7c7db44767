/** The node settings SGLang understands (README.md), as servelab names them. */
export interface SglangServerSettings {
  modelPath: string;
  port: number;
  host?: string;
  tpSize?: number;
  maxRunningRequests?: number;
  maxTotalTokens?: number;
  memFractionStatic?: number;
  chunkedPrefillSize?: number;
  schedulePolicy?: string;
  scheduleConservativeness?: number;
  enableTorchCompile?: boolean;
  quantization?: string;
  disableRadixCache?: boolean;
  enableMixedChunk?: boolean;
  /** KV tokens per page (SGLang's `--page-size`). */
  pageSize?: number;
  extraServerArgs?: string[];
  /** Where SGLang writes one JSON line per finished request (`--export-metrics-to-file-dir`). */
  requestLogDirectory?: string;
  /** One rank of a server that spans nodes (`--nnodes`); absent for a server on one node. */
  multiNode?: SglangRank;
  /** Prefill/decode disaggregation: this server's role (`--disaggregation-mode`); left out, co-located. */
  disaggregation?: SglangDisaggregation;
}

/**
 * A rank of a multi-node SGLang server: SGLang's `--nnodes`, `--node-rank` and `--dist-init-addr HOST:PORT` (the
 * address of rank 0's node, where the ranks meet to set up torch.distributed; server_args.py in sgl-project/sglang).
 * Only rank 0 serves HTTP.
 */
export interface SglangRank {
  nnodes: number;
  nodeRank: number;
  distInitAddr: string;
}

/**
 * A PD server's SGLang settings (server_args.py: `disaggregation_mode` null|prefill|decode,
 * `disaggregation_transfer_backend` default mooncake, `disaggregation_bootstrap_port` default 8998).
 */
export interface SglangDisaggregation {
  mode: 'prefill' | 'decode';
  /** Passed to both roles, which must agree on it. */
  transferBackend: string;
  /** A prefill server's bootstrap port (the decode side learns it from the request's `bootstrap_port`). */
  bootstrapPort?: number;
}

/**
 * `python -m sglang.launch_server` arguments. Flag names are SGLang's own (server_args.py derives each from its field:
 * `tp_size` → `--tp-size`). Always added:
 * - `--enable-metrics`: without it SGLang returns none of the per-request timing keys the lifecycle columns need, and
 *   no `/metrics`;
 * - `--enable-cache-report`: without it SGLang's OpenAI-compatible answers leave out
 *   `usage.prompt_tokens_details.cached_tokens` (off by default);
 * - with a request-log directory, `--export-metrics-to-file --export-metrics-to-file-dir DIR`: one JSON line per
 *   finished request (`sglang-request-metrics-{YYYYmmdd_HH}.log`), which servelab joins to its records by request id
 *   to get server timing on every protocol (see src/orchestration/server-request-logs.ts);
 * - for a PD server, `--disaggregation-mode`, `--disaggregation-transfer-backend` and, on a prefill server, its
 *   `--disaggregation-bootstrap-port`.
 */
export function sglangServerArgs(settings: SglangServerSettings): string[] {
  const args = ['-m', 'sglang.launch_server', '--model-path', settings.modelPath, '--host', settings.host ?? '127.0.0.1', '--port', String(settings.port)];
  const valued: [string, string | number | undefined][] = [
    ['--tp-size', settings.tpSize],
    ['--max-running-requests', settings.maxRunningRequests],
    ['--max-total-tokens', settings.maxTotalTokens],
    ['--mem-fraction-static', settings.memFractionStatic],
    ['--chunked-prefill-size', settings.chunkedPrefillSize],
    ['--schedule-policy', settings.schedulePolicy],
    ['--schedule-conservativeness', settings.scheduleConservativeness],
    ['--page-size', settings.pageSize],
    ['--quantization', settings.quantization],
  ];
  for (const [flag, value] of valued) if (value !== undefined) args.push(flag, String(value));
  if (settings.multiNode !== undefined) {
    args.push('--nnodes', String(settings.multiNode.nnodes), '--node-rank', String(settings.multiNode.nodeRank), '--dist-init-addr', settings.multiNode.distInitAddr);
  }
  if (settings.enableTorchCompile === true) args.push('--enable-torch-compile');
  if (settings.disableRadixCache === true) args.push('--disable-radix-cache');
  if (settings.enableMixedChunk === true) args.push('--enable-mixed-chunk');
  args.push('--enable-metrics', '--enable-cache-report');
  if (settings.requestLogDirectory !== undefined) args.push('--export-metrics-to-file', '--export-metrics-to-file-dir', settings.requestLogDirectory);
  const pd = settings.disaggregation;
  if (pd !== undefined) {
    args.push('--disaggregation-mode', pd.mode, '--disaggregation-transfer-backend', pd.transferBackend);
    if (pd.mode === 'prefill' && pd.bootstrapPort !== undefined) args.push('--disaggregation-bootstrap-port', String(pd.bootstrapPort));
  }
  args.push(...(settings.extraServerArgs ?? []));
  return args;
}

/** `CUDA_VISIBLE_DEVICES` for a server on `gpuId` (the first of `tpSize` consecutive GPUs) or an explicit list. */
export function visibleDevices(gpuId: number | number[], tpSize = 1): string {
  const ids = Array.isArray(gpuId) ? gpuId : Array.from({ length: tpSize }, (_, offset) => gpuId + offset);
  return ids.join(',');
}
