export interface SmgSettings {
  workerUrls: string[];
  policy: string;
  port: number;
  prometheusPort: number;
  host?: string;
  /** Seconds between health checks and their timeout; 1 s notices a dead worker within about a second. */
  healthCheckIntervalSecs?: number;
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
    '--worker-urls', ...settings.workerUrls,
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
