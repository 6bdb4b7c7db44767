/**
 * What the builtin router adds to a request's latency at 1,000 req/s (target: under 0.2 ms at p50 and 1 ms at
 * p99), beside nginx and the tracing tap, against going straight to the server in the same run (the baseline).
 *
 * Run: npm run build && node dist/bench/router-overhead.js [rate=1000] [seconds=5]
 *
 * Every party runs in its own process: a zero-work streaming stub, the proxy under test, and this load generator,
 * which sends POST /generate on an absolute Poisson-free constant schedule and measures, per request, the time from
 * the send to the first body chunk (the first SSE event). The client's own cost is the same on every path, so the
 * difference of each percentile from the direct path's is what the proxy adds. On a 2-core machine the processes
 * share cores; figures are indicative, and worse when other work runs. The CPU column (the proxy process's CPU time
 * per request; for the direct path, the stub's) does not depend on that contention: it is what each request costs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { DEFAULT_NGINX_PATH, startNginx } from '../src/cluster/launchers/nginx/start-nginx.js';
import type { TapOverhead } from '../src/types/routing.js';
import { summarizeDurations } from '../src/routing/tap/duration-summary.js';

const rate = Number(process.argv[2] ?? 1000);
const seconds = Number(process.argv[3] ?? 5);
/**
 * Unmeasured seconds before each path. Why 5 and not 1: after 1 s, V8 was still compiling the client's and the
 * proxy's hot paths (100 compilations in the proxy during the measured seconds), on the same two cores; the direct
 * path's own p99 then read 1.4 ms instead of 0.64 and every proxy's added p99 doubled.
 */
const WARMUP_SECONDS = 5;
const TARGET_P50_MS = 0.2;
const TARGET_P99_MS = 1;

const children: ChildProcess[] = [];

function spawnScript(script: string, args: string[]): Promise<{ child: ChildProcess; url: string; lines: string[] }> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, [path, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        lines.push(line);
        const match = /^URL (\S+)$/.exec(line);
        if (match !== null) resolve({ child, url: match[1] as string, lines });
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with code ${code}`)));
  });
}

/** Open-loop load at `rate` for `durationSeconds`; returns time-to-first-chunk per request in ms (warmup excluded). */
async function measure(baseUrl: string, durationSeconds: number): Promise<{ ttfbMs: number[]; failures: number }> {
  const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 60_000 });
  const body = JSON.stringify({ text: 'The quick brown fox jumps over the lazy dog. '.repeat(4), sampling_params: { max_new_tokens: 2 }, stream: true });
  const ttfbMs: number[] = [];
  let failures = 0;
  let sent = 0;
  const total = Math.round(rate * (durationSeconds + WARMUP_SECONDS));
  const warmupCount = Math.round(rate * WARMUP_SECONDS);
  const startMs = performance.now();
  const pending: Promise<void>[] = [];
  const sendOne = async (index: number): Promise<void> => {
    const sentMs = performance.now();
    try {
      const answer = await request(`${baseUrl}/generate`, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', 'x-request-id': `b${index}` },
        body,
      });
      let first = true;
      for await (const _chunk of answer.body) {
        if (first) {
          if (index >= warmupCount) ttfbMs.push(performance.now() - sentMs);
          first = false;
        }
      }
      if (answer.statusCode !== 200) failures++;
    } catch {
      failures++;
    }
  };
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - startMs) / 1000) * rate) + 1);
      while (sent < due) pending.push(sendOne(sent++));
      if (sent >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  await Promise.all(pending);
  await dispatcher.close();
  return { ttfbMs, failures };
}

/**
 * CPU seconds (user + system) a process has used, from /proc (Linux; clock ticks of 10 ms, so read over thousands of
 * requests only). Undefined elsewhere.
 */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // After the command name: state is field 3, utime field 14 and stime field 15 (1-based), so indexes 11 and 12.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

function fmt(value: number): string {
  return value.toFixed(3).padStart(8);
}

async function main(): Promise<void> {
  console.log(`router overhead at ${rate} req/s for ${seconds} s per path (after ${WARMUP_SECONDS} s warmup)`);
  const [load1] = loadavg();
  if ((load1 ?? 0) > availableParallelism() / 2) {
    console.log(`note: load average ${load1?.toFixed(1)} on ${availableParallelism()} cores: other work competes, latencies will be inflated`);
  }
  const stub = await spawnScript('./router-overhead-stub.js', []);
  const paths: { name: string; url: string; check?: boolean; pid?: number }[] = [{ name: 'direct (baseline)', url: stub.url, pid: stub.child.pid }];
  const router = await spawnScript('./router-overhead-proxy.js', ['router', 'round_robin', stub.url]);
  paths.push({ name: 'builtin router (round_robin)', url: router.url, check: true, pid: router.child.pid });
  const cacheRouter = await spawnScript('./router-overhead-proxy.js', ['router', 'cache_aware', stub.url]);
  paths.push({ name: 'builtin router (cache_aware)', url: cacheRouter.url, check: true, pid: cacheRouter.child.pid });
  const tap = await spawnScript('./router-overhead-proxy.js', ['taps', stub.url]);
  paths.push({ name: 'tracing tap', url: tap.url, pid: tap.child.pid });
  let nginxDirectory: string | undefined;
  let nginxClose: (() => Promise<void>) | undefined;
  if (existsSync(DEFAULT_NGINX_PATH)) {
    nginxDirectory = mkdtempSync(join(tmpdir(), 'servelab-bench-nginx-'));
    const nginx = await startNginx({ serverUrls: [stub.url], method: 'round_robin', runDirectory: nginxDirectory, port: 0 });
    nginxClose = () => nginx.close();
    paths.push({ name: 'nginx', url: nginx.url });
  } else {
    console.log(`nginx: skipped (${DEFAULT_NGINX_PATH} absent; apt-get install nginx)`);
  }

  const results: { name: string; p50: number; p99: number; mean: number; failures: number; check?: boolean; cpuUs?: number }[] = [];
  for (const path of paths) {
    const cpuBefore = cpuSeconds(path.pid);
    const { ttfbMs, failures } = await measure(path.url, seconds);
    const cpuAfter = cpuSeconds(path.pid);
    const requests = Math.round(rate * (seconds + WARMUP_SECONDS));
    const cpuUs = cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) / requests) * 1e6;
    const summary = summarizeDurations(ttfbMs);
    results.push({ name: path.name, p50: summary.p50Ms, p99: summary.p99Ms, mean: summary.meanMs, failures, check: path.check, cpuUs });
  }
  const base = results[0]!;
  console.log(`\n${'path'.padEnd(30)}     p50 ms   p99 ms  mean ms   +p50 ms  +p99 ms  failures  CPU µs/req  target`);
  for (const result of results) {
    const addedP50 = result.p50 - base.p50;
    const addedP99 = result.p99 - base.p99;
    const verdict =
      result.check === true
        ? `+p50 < ${TARGET_P50_MS} ms, +p99 < ${TARGET_P99_MS} ms: ${addedP50 < TARGET_P50_MS && addedP99 < TARGET_P99_MS ? 'met' : 'NOT met'}`
        : '';
    console.log(
      `${result.name.padEnd(30)} ${fmt(result.p50)} ${fmt(result.p99)} ${fmt(result.mean)} ${result === base ? '       -' : fmt(addedP50)} ${result === base ? '       -' : fmt(addedP99)} ${String(result.failures).padStart(9)}  ${(result.cpuUs === undefined ? '-' : result.cpuUs.toFixed(0)).padStart(10)}  ${verdict}`,
    );
  }
  // The tap's own view of its cost (see TapOverhead), for comparison with its A/B figure above.
  const overhead = await new Promise<TapOverhead | undefined>((resolve) => {
    const before = tap.lines.length;
    tap.child.kill('SIGUSR2');
    const started = Date.now();
    const poll = setInterval(() => {
      const line = tap.lines.slice(before).find((candidate) => candidate.startsWith('OVERHEAD '));
      if (line !== undefined || Date.now() - started > 2_000) {
        clearInterval(poll);
        resolve(line === undefined ? undefined : (JSON.parse(line.slice('OVERHEAD '.length)) as TapOverhead));
      }
    }, 20);
  });
  if (overhead !== undefined) {
    console.log(
      `\ntap, measured inside: inbound p50 ${overhead.inboundMs.p50Ms.toFixed(4)} ms p99 ${overhead.inboundMs.p99Ms.toFixed(4)} ms;` +
        ` relay (per request, all chunks) p50 ${overhead.relayMs.p50Ms.toFixed(4)} ms p99 ${overhead.relayMs.p99Ms.toFixed(4)} ms`,
    );
  }
  await nginxClose?.();
  if (nginxDirectory !== undefined) rmSync(nginxDirectory, { recursive: true, force: true });
}

try {
  await main();
} finally {
  for (const child of children) child.kill('SIGTERM');
}
