import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { NGINX_HEALTH_PATH, renderNginxConfig } from '../../../src/cluster/launchers/nginx/nginx-config.js';
import { startNginx } from '../../../src/cluster/launchers/nginx/start-nginx.js';
import { ServelabError } from '../../../src/errors/servelab-error.js';
import { sseEvents, startScriptedUpstream, type ScriptedUpstream } from '../../routing/scripted-upstream.js';
import { nginxMissing } from '../../helpers/require-tool.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

function runDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'servelab-nginx-'));
  closers.push(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

describe('nginx config', () => {
  it('balances over the servers with least_conn, streams unbuffered, keeps upstream connections alive', () => {
    const config = renderNginxConfig({
      serverUrls: ['http://127.0.0.1:30001', 'http://10.0.0.2:30002/'],
      method: 'least_conn',
      runDirectory: '/runs/r1/nginx',
      port: 8080,
    });
    expect(config).toMatch(/upstream servelab_servers \{\s+least_conn;\s+server 127\.0\.0\.1:30001 max_fails=1 fail_timeout=1s;\s+server 10\.0\.0\.2:30002 max_fails=1 fail_timeout=1s;/);
    expect(config).toContain('proxy_buffering off;');
    expect(config).toContain('proxy_http_version 1.1;');
    expect(config).toContain('proxy_set_header Connection "";');
    expect(config).toMatch(/keepalive \d+;/);
    expect(config).toContain('listen 127.0.0.1:8080');
    expect(config).toContain('pid "/runs/r1/nginx/nginx.pid";');
    expect(config).toContain('proxy_temp_path "/runs/r1/nginx/temp/proxy";');
    expect(config).toMatch(/log_format servelab .*\$msec.*\$http_x_request_id.*\$upstream_addr/);
    expect(config).not.toMatch(/^\s*user /m);
  });

  it('uses round robin (no balancing directive) when asked, and rejects bad server URLs', () => {
    const config = renderNginxConfig({ serverUrls: ['http://127.0.0.1:1'], method: 'round_robin', runDirectory: '/r', port: 1 });
    expect(config).not.toContain('least_conn');
    expect(() => renderNginxConfig({ serverUrls: ['https://a:1'], method: 'round_robin', runDirectory: '/r', port: 1 })).toThrow(ServelabError);
    expect(() => renderNginxConfig({ serverUrls: [], method: 'round_robin', runDirectory: '/r', port: 1 })).toThrow(/at least one/);
  });
});

describe('startNginx', () => {
  it('fails with NOT_INSTALLED and the apt-get hint when nginx is missing', async () => {
    const error: unknown = await startNginx({
      serverUrls: ['http://127.0.0.1:1'],
      method: 'round_robin',
      runDirectory: runDirectory(),
      port: 0,
      nginxPath: '/nonexistent/nginx',
    }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ServelabError);
    expect((error as ServelabError).code).toBe('NOT_INSTALLED');
    expect((error as ServelabError).message).toContain('apt-get install nginx');
  });

  const noNginx = nginxMissing();
  it.skipIf(noNginx !== undefined)(`proxies and streams through real nginx, logging request ids and servers${noNginx === undefined ? '' : ` (skipped: ${noNginx})`}`, async () => {
    // Each upstream writes its next event only once the client has read one more chunk: a proxy that buffered the
    // answer would hold back the first event, and the stream would never finish (the test would fail on its timeout).
    let chunksRead = 0;
    const waiting: { afterChunks: number; resolve: () => void }[] = [];
    const beforeNextEvent = (): Promise<void> =>
      new Promise((resolve) => {
        waiting.push({ afterChunks: chunksRead + 1, resolve });
      });
    const chunkRead = (): void => {
      chunksRead++;
      for (const entry of waiting.splice(0)) {
        if (chunksRead >= entry.afterChunks) entry.resolve();
        else waiting.push(entry);
      }
    };
    const upstreams: ScriptedUpstream[] = await Promise.all([startScriptedUpstream('u0', 0, { beforeNextEvent }), startScriptedUpstream('u1', 0, { beforeNextEvent })]);
    for (const upstream of upstreams) closers.push(() => upstream.close());
    const directory = runDirectory();
    const nginx = await startNginx({ serverUrls: upstreams.map((upstream) => upstream.url), method: 'round_robin', runDirectory: directory, port: 0 });
    closers.push(() => nginx.close());
    const health = await request(`${nginx.url}${NGINX_HEALTH_PATH}`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();

    const served: string[] = [];
    for (let index = 0; index < 4; index++) {
      const answer = await request(`${nginx.url}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': `n${index}` },
        body: JSON.stringify({ text: 'hi', stream: true }),
      });
      expect(answer.statusCode).toBe(200);
      const chunks: string[] = [];
      for await (const chunk of answer.body) {
        chunks.push((chunk as Buffer).toString('utf8'));
        chunkRead();
      }
      // Unbuffered: each event came through on its own before the upstream wrote the next.
      expect(chunks).toHaveLength(sseEvents('u0').length);
      const text = chunks.join('');
      served.push(text === sseEvents('u0').join('') ? 'u0' : text === sseEvents('u1').join('') ? 'u1' : 'changed');
    }
    expect(served.sort()).toEqual(['u0', 'u0', 'u1', 'u1']);
    expect(upstreams[0]!.seen[0]?.headers['x-request-id']).toMatch(/^n\d$/);

    await nginx.close();
    // The access log is flushed on exit: one JSON line per request with its id and the server that took it.
    let lines: { request_id: string; upstream_addr: string; msec: number; status: number }[] = [];
    for (let attempt = 0; attempt < 60 && lines.length < 4; attempt++) {
      if (existsSync(nginx.accessLogPath)) {
        lines = readFileSync(nginx.accessLogPath, 'utf8').trim().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as (typeof lines)[number]);
      }
      if (lines.length < 4) await sleep(50);
    }
    expect(lines.map((line) => line.request_id).sort()).toEqual(['n0', 'n1', 'n2', 'n3']);
    const addresses = new Set(upstreams.map((upstream) => new URL(upstream.url).host));
    for (const line of lines) {
      expect(addresses.has(line.upstream_addr)).toBe(true);
      expect(line.status).toBe(200);
      expect(Math.abs(line.msec - Date.now() / 1000)).toBeLessThan(60);
    }
  });
});
