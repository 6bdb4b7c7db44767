export interface SmgSettings {
  workerUrls: string[];
  policy: string;
  port: number;
  prometheusPort: number;
  host?: string;
  /** Seconds between health checks and their timeout; 1 s notices a dead worker within about a second. */
  healthCheckIntervalSecs?: number;
  /** Prefill/decode disaggregation: smg's PD mode over these servers (`workerUrls` is then not passed). */
  pd?: PdRouterArgs;
}

/** A PD router's servers and policies, as smg and sglang-router take them. */
export interface PdRouterArgs {
  /** `bootstrapPort` null: smg's `none` (the server has no bootstrap port). */
  prefill: readonly { url: string; bootstrapPort: number | null }[];
  decode: readonly string[];
  /** Left out: the router applies `--policy` to that side, as servelab's own default does. */
  prefillPolicy?: string;
  decodePolicy?: string;
}

/**
 * The PD flags smg (bindings/python/src/smg/router_args.py, lightseekorg/smg 73da68ca) and sglang-router 0.3.x
 * (sgl-router/py_src/sglang_router/router_args.py, sgl-project/sglang 083d6013) share: `--pd-disaggregation`, one
 * `--prefill URL BOOTSTRAP_PORT|none` per prefill server (argparse nargs='+', append; a port left out means none), one
 * `--decode URL` per decode server (nargs=1, append), and the side policies only when given. In PD mode both ignore
 * `--worker-urls`.
 */
export function pdRouterArgs(pd: PdRouterArgs): string[] {
  const args = ['--pd-disaggregation'];
  for (const server of pd.prefill) args.push('--prefill', server.url, server.bootstrapPort === null ? 'none' : String(server.bootstrapPort));
  for (const url of pd.decode) args.push('--decode', url);
  if (pd.prefillPolicy !== undefined) args.push('--prefill-policy', pd.prefillPolicy);
  if (pd.decodePolicy !== undefined) args.push('--decode-policy', pd.decodePolicy);
  return args;
}

/**
 * smg's launch flags (bindings/python/src/smg/router_args.py, lightseekorg/smg 73da68ca). smg checks health every
 * 60 s and needs 3 failures by default, so a crashed worker would go unnoticed for minutes of a failure test; servelab
 * checks every second with a one-second timeout, and one failure (or one success) changes a worker's state, as its
 * builtin router's checks do within a second or two.
 */
export function smgRouterArgs(settings: SmgSettings): string[] {
  const host = settings.host ?? '127.0.0.1';
  const interval = String(settings.healthCheckIntervalSecs ?? 1);
  return [
    ...(settings.pd === undefined ? ['--worker-urls', ...settings.workerUrls] : pdRouterArgs(settings.pd)),
    '--host', host,
    '--port', String(settings.port),
    '--policy', settings.policy,
    // smg serves Prometheus metrics (smg_*) on their own port (default 29000): each router gets its own.
    '--prometheus-port', String(settings.prometheusPort),
    '--prometheus-host', host,
    '--health-check-interval-secs', interval,
    '--health-check-timeout-secs', interval,
    '--health-failure-threshold', '1',
    '--health-success-threshold', '1',
    // Workers are already up when smg starts; its default 30 s between start-up checks would only delay a relaunch.
    '--worker-startup-check-interval', '1',
  ];
}
