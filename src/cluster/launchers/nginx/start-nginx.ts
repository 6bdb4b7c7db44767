import type { ProcessExit, ProcessPlacement } from '../../../types/cluster.js';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServelabError } from '../../../errors/servelab-error.js';
import { localPlacement } from '../../placement/local/local-placement.js';
import { findFreePort } from '../../ports.js';
import { answersOk } from '../../readiness.js';
import { NGINX_HEALTH_PATH, nginxPaths, renderNginxConfig, type NginxConfigSettings } from './nginx-config.js';

/** Debian's nginx binary. */
export const DEFAULT_NGINX_PATH = '/usr/sbin/nginx';

/**
 * The config's settings (the run and logs directories are created if missing; port 0 picks a free port), plus where
 * nginx is and how long to wait for it.
 */
export interface StartNginxOptions extends NginxConfigSettings {
  nginxPath?: string;
  readyTimeoutMs?: number;
  /** Where nginx runs (default: this host). */
  placement?: ProcessPlacement;
  node?: string;
}

export interface NginxHandle {
  url: string;
  port: number;
  pid: number | undefined;
  configPath: string;
  accessLogPath: string;
  /** Resolves when nginx exits. */
  exited: Promise<ProcessExit>;
  close(): Promise<void>;
}

/**
 * Writes an nginx config for the servers and runs `nginx -g 'daemon off;' -c <config> -p <runDirectory>` in the
 * foreground, with its error log under the run directory from the start (`-e`). Resolves once nginx answers on
 * its own health path; `close()` stops it (SIGQUIT lets it finish open requests, SIGKILL after the grace period).
 */
export async function startNginx(options: StartNginxOptions): Promise<NginxHandle> {
  const nginxPath = options.nginxPath ?? DEFAULT_NGINX_PATH;
  if (!existsSync(nginxPath)) {
    throw new ServelabError(
      'NOT_INSTALLED',
      `nginx is not installed (no ${nginxPath}): install it with \`apt-get install nginx\`, or choose another router`,
    );
  }
  const runDirectory = resolve(options.runDirectory);
  const placement = options.placement ?? localPlacement;
  const host = options.host ?? placement.hostOf(options.node);
  // An explicit listening address is probed there; otherwise the placement knows the node's.
  const port = options.port !== 0 ? options.port : options.host !== undefined ? await findFreePort(options.host) : await placement.freePort(options.node);
  const logsDirectory = options.logsDirectory === undefined ? undefined : resolve(options.logsDirectory);
  const paths = nginxPaths(runDirectory, logsDirectory);
  mkdirSync(paths.tempDirectory, { recursive: true });
  if (logsDirectory !== undefined) mkdirSync(logsDirectory, { recursive: true });
  writeFileSync(
    paths.configPath,
    renderNginxConfig({ ...options, runDirectory, ...(logsDirectory === undefined ? {} : { logsDirectory }), port, host }),
  );
  const child = placement.spawn({
    name: 'nginx',
    ...(options.node === undefined ? {} : { node: options.node }),
    command: nginxPath,
    args: ['-g', 'daemon off;', '-c', paths.configPath, '-p', runDirectory, '-e', paths.errorLogPath],
    logPath: join(logsDirectory ?? runDirectory, 'nginx.log'),
    stopGraceMs: 5_000,
  });
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const deadline = performance.now() + (options.readyTimeoutMs ?? 15_000);
  let ready = false;
  while (!child.hasExited && performance.now() < deadline) {
    if (await answersOk(`${url}${NGINX_HEALTH_PATH}`, 1_000)) {
      ready = true;
      break;
    }
    await sleep(50);
  }
  if (!ready) {
    // nginx reports configuration and bind errors in its error log, not on stdout.
    const failure = child.hasExited
      ? child.exitFailure(`listen on ${url} (see ${paths.errorLogPath})`)
      : child.failure('NOT_READY', `nginx did not answer on ${url} within ${((options.readyTimeoutMs ?? 15_000) / 1000).toFixed(0)} s (see ${paths.errorLogPath})`);
    await child.stop();
    throw failure;
  }
  return {
    url,
    port,
    pid: child.pid,
    configPath: paths.configPath,
    accessLogPath: paths.accessLogPath,
    exited: child.exited,
    close: async () => {
      // SIGQUIT is nginx's graceful shutdown (SIGTERM is its fast one); the supervisor escalates if needed.
      // To the group: also when the master died first, its workers still serve and hold the port.
      child.signal('SIGQUIT');
      // The grace timer is cancelled once nginx is gone: a pending timer would hold servelab's exit for 3 s.
      const graceOver = new AbortController();
      await Promise.race([child.exited, sleep(3_000, undefined, { signal: graceOver.signal }).catch(() => undefined)]);
      graceOver.abort();
      await child.stop();
    },
  };
}
