/**
 * Client CPU per streamed request and client overhead on TTFT (SPEC §11), for the sglang protocol client over its
 * default plain-HTTP transport (SocketPool), with the same client over undici alongside.
 *
 * Run: npm run build && node dist/bench/client-cpu.js [requests] [concurrency]
 *
 * A zero-work streaming stub (bench/client-cpu-stub.ts) runs in a child process; with `taskset` the stub is pinned to
 * CPU 1 and this process to CPU 0, so stub and client never share a core. Each stub answer is SGLang-shaped: headers
 * and the first token at once, then one event per millisecond, 16 tokens, `[DONE]`.
 *
 * Baseline measured in the same run: a raw-socket reference client (node:net, prebuilt request bytes, keep-alive
 * sockets, one clock reading per chunk, `completion_tokens` found by `indexOf`) — roughly the least any Node client can
 * spend. Rounds alternate between the two clients so that drift (turbo, other load) hits both alike.
 *
 * - CPU: process CPU time (user + system, all of this process) over a closed loop of N requests at concurrency C,
 *   divided by N. Target: under 80 µs per streamed request of 16 tokens.
 * - TTFT overhead: requests one at a time; TTFT = first token-carrying chunk − the moment `send` is called. The
 *   overhead is servelab's TTFT minus the raw client's (mean and p99). Targets: under 0.2 ms mean, 0.5 ms p99.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { createConnection } from 'node:net';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../src/clock/clock.js';
import { createProtocolClient } from '../src/clients/registry.js';
import type { ClientRequest, ProtocolClient } from '../src/types/client.js';
import type { ClientOutcome } from '../src/types/record.js';
import { canPin } from './stub/pinning.js';

const TOKENS = 16;
const TARGET_CPU_MICROSECONDS = 80;
const TARGET_TTFT_MEAN_MS = 0.2;
const TARGET_TTFT_P99_MS = 0.5;

const requestsPerRound = Number(process.argv[2] ?? 4000);
const concurrency = Number(process.argv[3] ?? 64);
const rounds = 4;
const ttftSamples = 1500;

const PROMPT = Array.from({ length: 32 }, (_, index) => `w${index}`).join(' ');

async function startStub(pinned: boolean): Promise<{ port: number; child: ChildProcess }> {
  const stubPath = fileURLToPath(new URL('./client-cpu-stub.js', import.meta.url));
  const child = pinned
    ? spawn('taskset', ['-c', '1', process.execPath, stubPath], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, STUB_TOKENS: String(TOKENS) } })
    : spawn(process.execPath, [stubPath], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, STUB_TOKENS: String(TOKENS) } });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (data: Buffer) => resolve(Number.parseInt(data.toString('utf8'), 10)));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the stub exited with code ${code}`)));
  });
  return { port, child };
}

/** The reference: what a client that knows exactly what the stub sends has to spend, and no more. */
class RawConnection {
  readonly #socket: Socket;
  readonly #request: Buffer;
  #resolve: ((result: { firstTokenMs: number; tokens: number }) => void) | undefined;
  #firstTokenMs = -1;
  #lastTokenMs = 0;
  #tokens = 0;
  readonly gaps: number[] = [];

  constructor(port: number, request: Buffer) {
    this.#request = request;
    this.#socket = createConnection({ port, host: '127.0.0.1', noDelay: true });
    this.#socket.on('data', (data: Buffer) => this.#onData(data));
  }

  ready(): Promise<void> {
    return new Promise((resolve) => this.#socket.once('connect', () => resolve()));
  }

  send(): Promise<{ firstTokenMs: number; tokens: number }> {
    this.#firstTokenMs = -1;
    this.#tokens = 0;
    this.gaps.length = 0;
    return new Promise((resolve) => {
      this.#resolve = resolve;
      this.#socket.write(this.#request);
    });
  }

  #onData(data: Buffer): void {
    const nowMs = performance.now();
    let from = 0;
    for (;;) {
      const at = data.indexOf('"completion_tokens":', from, 'latin1');
      if (at < 0) break;
      let value = 0;
      let cursor = at + 20;
      for (let code = data[cursor] ?? 0; code >= 48 && code <= 57; code = data[++cursor] ?? 0) value = value * 10 + code - 48;
      const added = value - this.#tokens;
      if (added > 0) {
        if (this.#firstTokenMs < 0) this.#firstTokenMs = nowMs;
        else for (let index = 0; index < added; index++) this.gaps.push((nowMs - this.#lastTokenMs) / 1000 / added);
        this.#lastTokenMs = nowMs;
        this.#tokens = value;
      }
      from = cursor;
    }
    // The last bytes of a chunked body: the zero-length chunk.
    if (data.length >= 5 && data.toString('latin1', data.length - 5) === '0\r\n\r\n') {
      const resolve = this.#resolve;
      this.#resolve = undefined;
      resolve?.({ firstTokenMs: this.#firstTokenMs, tokens: this.#tokens });
    }
  }

  close(): void {
    this.#socket.destroy();
  }
}

function rawRequestBytes(port: number): Buffer {
  const body = JSON.stringify({
    text: PROMPT,
    sampling_params: { max_new_tokens: TOKENS, ignore_eos: true, temperature: 0 },
    stream: true,
    rid: 'raw',
  });
  return Buffer.from(
    `POST /generate HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nconnection: keep-alive\r\ncontent-type: application/json\r\n` +
      `x-request-id: raw\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

let sequence = 0;
function nextRequest(): ClientRequest {
  return {
    requestId: `bench-${sequence++}`,
    workload: { datasetIndex: sequence, prompt: PROMPT, inputLength: 32, outputLength: TOKENS },
  };
}

async function closedLoop(total: number, workers: number, sendOne: (worker: number) => Promise<void>): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (started < total) {
        started++;
        await sendOne(worker);
      }
    }),
  );
}

function cpuMicroseconds(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

async function measureCpu(label: string, total: number, run: () => Promise<void>): Promise<number> {
  const beforeCpu = cpuMicroseconds();
  const beforeWall = performance.now();
  await run();
  const perRequest = (cpuMicroseconds() - beforeCpu) / total;
  const wallSeconds = (performance.now() - beforeWall) / 1000;
  console.log(`  ${label.padEnd(10)} ${perRequest.toFixed(1).padStart(7)} µs CPU/request   (${(total / wallSeconds).toFixed(0)} req/s)`);
  return perRequest;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = fraction * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (rank - low);
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function verdict(ok: boolean): string {
  return ok ? 'meets target' : 'MISSES target';
}

async function main(): Promise<void> {
  const pinned = canPin();
  if (pinned) execFileSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' });
  const { port, child } = await startStub(pinned);
  const baseUrl = `http://127.0.0.1:${port}`;
  console.log(`client CPU benchmark: ${TOKENS} streamed tokens, ${requestsPerRound} requests x ${rounds} rounds per client, concurrency ${concurrency}`);
  console.log(pinned ? 'client pinned to CPU 0, stub to CPU 1' : 'no taskset or one CPU: client and stub are not pinned');

  const clientOver = (httpTransport: 'socket' | 'undici'): ProtocolClient =>
    createProtocolClient('sglang', {
      baseUrl,
      stream: true,
      sampling: { temperature: 0, ignoreEos: true },
      maxConnections: concurrency,
      httpTransport,
      clock: systemClock,
    });
  const client = clientOver('socket');
  const undiciClient = clientOver('undici');
  const raw = await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const connection = new RawConnection(port, rawRequestBytes(port));
      await connection.ready();
      return connection;
    }),
  );

  let failures = 0;
  const check = (outcome: ClientOutcome): void => {
    if (!outcome.success || outcome.actualOutputTokens !== TOKENS || outcome.interTokenLatencies?.length !== TOKENS - 1) failures++;
  };
  const servelabOnce = async (): Promise<void> => check(await client.send(nextRequest()));
  const undiciOnce = async (): Promise<void> => check(await undiciClient.send(nextRequest()));
  const rawOnce = async (worker: number): Promise<void> => {
    const result = await (raw[worker] as RawConnection).send();
    if (result.tokens !== TOKENS) failures++;
  };

  // Warm up both (JIT, connections).
  await closedLoop(1000, concurrency, servelabOnce);
  await closedLoop(1000, concurrency, undiciOnce);
  await closedLoop(1000, concurrency, rawOnce);

  const servelabCpu: number[] = [];
  const undiciCpu: number[] = [];
  const rawCpu: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    console.log(`round ${round}`);
    servelabCpu.push(await measureCpu('servelab', requestsPerRound, () => closedLoop(requestsPerRound, concurrency, servelabOnce)));
    undiciCpu.push(await measureCpu('on undici', requestsPerRound, () => closedLoop(requestsPerRound, concurrency, undiciOnce)));
    rawCpu.push(await measureCpu('raw', requestsPerRound, () => closedLoop(requestsPerRound, concurrency, rawOnce)));
  }

  // TTFT: one request at a time, interleaved.
  const servelabTtft: number[] = [];
  const rawTtft: number[] = [];
  for (let sample = 0; sample < ttftSamples + 100; sample++) {
    const sentMs = performance.now();
    const outcome = await client.send(nextRequest());
    const firstTokenMs = (outcome.firstTokenTime ?? Number.NaN) * 1000 - performance.timeOrigin;
    const rawSentMs = performance.now();
    const rawResult = await (raw[0] as RawConnection).send();
    if (sample < 100) continue; // warm-up
    servelabTtft.push(firstTokenMs - sentMs);
    rawTtft.push(rawResult.firstTokenMs - rawSentMs);
  }

  await client.close();
  await undiciClient.close();
  for (const connection of raw) connection.close();
  child.kill('SIGTERM');

  const servelabCpuMedian = percentile(servelabCpu, 0.5);
  const rawCpuMedian = percentile(rawCpu, 0.5);
  const undiciCpuMedian = percentile(undiciCpu, 0.5);
  const overheadMean = mean(servelabTtft) - mean(rawTtft);
  const overheadP99 = percentile(servelabTtft, 0.99) - percentile(rawTtft, 0.99);
  console.log('');
  console.log(`failed or miscounted requests: ${failures}`);
  console.log(
    `client CPU per streamed request (median of rounds): ${servelabCpuMedian.toFixed(1)} µs ` +
      `(target < ${TARGET_CPU_MICROSECONDS} µs: ${verdict(servelabCpuMedian < TARGET_CPU_MICROSECONDS)}); ` +
      `raw-socket reference ${rawCpuMedian.toFixed(1)} µs; ratio ${(servelabCpuMedian / rawCpuMedian).toFixed(2)}x`,
  );
  console.log(
    `same client over undici (httpTransport: 'undici', used for https): ${undiciCpuMedian.toFixed(1)} µs; ` +
      `ratio to raw ${(undiciCpuMedian / rawCpuMedian).toFixed(2)}x`,
  );
  console.log(
    `TTFT: servelab mean ${mean(servelabTtft).toFixed(3)} ms p99 ${percentile(servelabTtft, 0.99).toFixed(3)} ms; ` +
      `raw mean ${mean(rawTtft).toFixed(3)} ms p99 ${percentile(rawTtft, 0.99).toFixed(3)} ms`,
  );
  console.log(
    `TTFT overhead vs raw: mean ${overheadMean.toFixed(3)} ms (target < ${TARGET_TTFT_MEAN_MS} ms: ${verdict(overheadMean < TARGET_TTFT_MEAN_MS)}), ` +
      `p99 ${overheadP99.toFixed(3)} ms (target < ${TARGET_TTFT_P99_MS} ms: ${verdict(overheadP99 < TARGET_TTFT_P99_MS)})`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
