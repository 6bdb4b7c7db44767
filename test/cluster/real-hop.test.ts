import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { assertCliBuilt, cliPath } from '../helpers/cli.js';
import { faketimeMissing, ipMissing } from '../helpers/require-tool.js';

/**
 * servelab across a real network hop, and against a server whose clock is off.
 *
 * Two network namespaces made here, joined by a veth pair: servelab runs in one ("client host"), simulated servers in
 * the other ("server host"), so every request crosses a real link between two addresses. A delaying relay inside the
 * server's namespace adds a known one-way delay each way (this kernel has no netem qdisc). One server runs under
 * Debian's faketime with its wall clock 250 ms ahead. Traffic stays inside the two namespaces.
 *
 * Needs root, iproute2 and (for the clock test) faketime; `.ci/run` installs them. Where namespaces cannot be made, the
 * tests are skipped and their names say why.
 */

const DELAY_MS = 2;
const relayScript = fileURLToPath(new URL('../helpers/delay-relay.mjs', import.meta.url));
const suffix = String(process.pid % 100_000);
const clientNamespace = `sl-c-${suffix}`;
const serverNamespace = `sl-s-${suffix}`;
const subnet = `10.254.${process.pid % 250}`;
const clientAddress = `${subnet}.1`;
const serverAddress = `${subnet}.2`;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function commandProblem(command: string, args: string[]): string | null {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return null;
  } catch (error) {
    return `${command} ${args.join(' ')} failed (${(error as Error).message.split('\n')[0]})`;
  }
}

/** Why this machine cannot run the namespace tests, or null when it can (checked by making and removing one). */
function namespaceProblem(): string | null {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0) return 'making network namespaces needs root';
  const noIp = ipMissing();
  if (noIp !== undefined) return noIp;
  const probe = `sl-probe-${suffix}`;
  const problem = commandProblem('ip', ['netns', 'add', probe]);
  if (problem === null) commandProblem('ip', ['netns', 'del', probe]);
  return problem;
}

const cannotMakeNamespaces = namespaceProblem();
const noFaketime = cannotMakeNamespaces ?? faketimeMissing() ?? null;

const started: ChildProcess[] = [];

/** Starts a process inside a namespace in its own process group and waits for a line on its stdout. */
async function startIn(namespace: string, args: string[], readyPattern: RegExp, prefix: string[] = []): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn('ip', ['netns', 'exec', namespace, ...prefix, process.execPath, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FAKETIME_DONT_FAKE_MONOTONIC: '1' },
  });
  started.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line from ${args.join(' ')}: ${output}`)), 20_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (readyPattern.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${output}`)));
  });
  return { child, output: () => output };
}

/** A simulated server on the server namespace's loopback, optionally under faketime; returns its port. */
async function startServer(fakeClock?: string): Promise<number> {
  const prefix = fakeClock === undefined ? [] : ['faketime', '-f', fakeClock];
  const { output } = await startIn(serverNamespace, [cliPath, 'sim-server', '--host', '127.0.0.1', '--port', '0'], /listening on http:\/\/127\.0\.0\.1:\d+/, prefix);
  return Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output())?.[1]);
}

async function startRelay(listenPort: number, targetPort: number, delayMs: number): Promise<void> {
  await startIn(serverNamespace, [relayScript, serverAddress, String(listenPort), '127.0.0.1', String(targetPort), String(delayMs)], /delay-relay listening/);
}

interface HopRun {
  networkTimesMs: number[];
  rawNetworkTimesMs: number[];
  clockOffsets: Array<{ offsetMs: number | null; uncertaintyMs: number | null; corrected: boolean; note: string }>;
}

const quantile = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) * q)] as number;
};
const median = (values: readonly number[]): number => quantile(values, 0.5);
/**
 * The hop's own delay is read at the 10th percentile: what a busy 2-core machine adds (a server or relay waiting for a
 * core) only ever lengthens a request's network_time, so the low quantile shows the path itself, the median the path
 * plus the machine's load at that moment.
 */
const low = (values: readonly number[]): number => quantile(values, 0.1);

/** Runs `servelab node --target attach` from the client namespace against a port of the server namespace. */
async function measureThrough(port: number, workDirectory: string, name: string): Promise<HopRun> {
  const outputDirectory = join(workDirectory, name);
  const args = [
    cliPath, 'node', '--target', 'attach', '--url', `http://${serverAddress}:${port}`,
    '--request-rate', '25', '--num-prompts', '120', '--random-input-len', '32', '--random-output-len', '4',
    '--output-dir', outputDirectory, '--progress', 'off', '--quiet',
  ];
  const child = spawn('ip', ['netns', 'exec', clientNamespace, process.execPath, ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(code, output).toBe(0);

  const rows = parseCsv(await readFile(join(outputDirectory, 'requests.csv'), 'utf8'));
  const header = rows[0] as string[];
  const column = (name: string): number => header.indexOf(name);
  const succeeded = rows.slice(1).filter((row) => row[column('success')] === 'true');
  const networkTimesMs = succeeded.map((row) => Number(row[column('network_time')]) * 1000);
  const raw = (await readFile(join(outputDirectory, 'requests.jsonl'), 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => record['success'] === true);
  const rawNetworkTimesMs = raw.map((record) => ((record['server_created_time'] as number) - (record['router_send_time'] as number)) * 1000);
  const summary = JSON.parse(await readFile(join(outputDirectory, 'summary.json'), 'utf8')) as { metrics: { clockOffsets?: HopRun['clockOffsets'] } };
  return { networkTimesMs, rawNetworkTimesMs, clockOffsets: summary.metrics.clockOffsets ?? [] };
}

describe('servelab across a real network hop', () => {
  let workDirectory = '';
  const ports = { direct: 8001, delayed: 8000, delayedFastClock: 8002 };
  // The no-delay baseline, measured once for both tests.
  let directRun: Promise<HopRun> | undefined;
  const direct = (): Promise<HopRun> => (directRun ??= measureThrough(ports.direct, workDirectory, 'direct'));

  beforeAll(async () => {
    if (cannotMakeNamespaces !== null) return;
    assertCliBuilt();
    workDirectory = await mkdtemp(join(tmpdir(), 'servelab-hop-'));
    const clientVeth = `slc${suffix}`;
    const serverVeth = `sls${suffix}`;
    ip('netns', 'add', clientNamespace);
    ip('netns', 'add', serverNamespace);
    ip('link', 'add', clientVeth, 'type', 'veth', 'peer', 'name', serverVeth);
    ip('link', 'set', clientVeth, 'netns', clientNamespace);
    ip('link', 'set', serverVeth, 'netns', serverNamespace);
    ip('-n', clientNamespace, 'addr', 'add', `${clientAddress}/30`, 'dev', clientVeth);
    ip('-n', serverNamespace, 'addr', 'add', `${serverAddress}/30`, 'dev', serverVeth);
    for (const [namespace, device] of [[clientNamespace, clientVeth], [serverNamespace, serverVeth]] as const) {
      ip('-n', namespace, 'link', 'set', device, 'up');
      ip('-n', namespace, 'link', 'set', 'lo', 'up');
    }
    const server = await startServer();
    await startRelay(ports.direct, server, 0);
    await startRelay(ports.delayed, server, DELAY_MS);
    if (noFaketime === null) {
      const fastClockServer = await startServer('+0.25s');
      await startRelay(ports.delayedFastClock, fastClockServer, DELAY_MS);
    }
  }, 60_000);

  afterAll(async () => {
    for (const child of started) {
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
    }
    if (cannotMakeNamespaces === null) {
      for (const namespace of [clientNamespace, serverNamespace]) commandProblem('ip', ['netns', 'del', namespace]);
    }
    if (workDirectory !== '') await rm(workDirectory, { recursive: true, force: true });
  });

  const hopTitle = cannotMakeNamespaces === null ? '' : ` (skipped: ${cannotMakeNamespaces})`;
  it.skipIf(cannotMakeNamespaces !== null)(`network_time grows by the added one-way delay${hopTitle}`, async () => {
    const baseline = await direct();
    const delayed = await measureThrough(ports.delayed, workDirectory, 'delayed');
    const addedMs = low(delayed.networkTimesMs) - low(baseline.networkTimesMs);
    console.log(
      `real hop: network_time p10 direct ${low(baseline.networkTimesMs).toFixed(3)} ms, delayed ${low(delayed.networkTimesMs).toFixed(3)} ms, added ${addedMs.toFixed(3)} ms` +
        ` (p50 ${median(baseline.networkTimesMs).toFixed(3)} / ${median(delayed.networkTimesMs).toFixed(3)} ms; relay adds ${DELAY_MS} ms each way)`,
    );
    expect(Math.abs(addedMs - DELAY_MS)).toBeLessThan(0.3);
    // One kernel, one clock: the requests' bounds include zero, so nothing is corrected and raw equals the table.
    expect(delayed.clockOffsets[0]?.corrected).toBe(false);
    expect(median(delayed.rawNetworkTimesMs)).toBeCloseTo(median(delayed.networkTimesMs), 2);
  }, 90_000);

  const clockTitle = noFaketime === null ? '' : ` (skipped: ${noFaketime})`;
  it.skipIf(noFaketime !== null)(`a server clock 250 ms ahead is estimated from the requests and removed${clockTitle}`, async () => {
    const baseline = await direct();
    const skewed = await measureThrough(ports.delayedFastClock, workDirectory, 'fast-clock');
    const [estimate] = skewed.clockOffsets;
    console.log(
      `fast clock: offset ${estimate?.offsetMs} ± ${estimate?.uncertaintyMs} ms; network_time p10 raw ${low(skewed.rawNetworkTimesMs).toFixed(3)} ms, corrected ${low(skewed.networkTimesMs).toFixed(3)} ms, direct ${low(baseline.networkTimesMs).toFixed(3)} ms`,
    );
    expect(estimate?.corrected).toBe(true);
    expect(Math.abs((estimate?.offsetMs ?? 0) - 250)).toBeLessThan(10);
    expect(median(skewed.rawNetworkTimesMs)).toBeGreaterThan(240);
    // Corrected, the column shows the hop again: the added delay within the estimate's own uncertainty.
    const addedMs = low(skewed.networkTimesMs) - low(baseline.networkTimesMs);
    expect(Math.abs(addedMs - DELAY_MS)).toBeLessThan(Math.max(0.3, estimate?.uncertaintyMs ?? 0));
    expect(Math.min(...skewed.networkTimesMs)).toBeGreaterThanOrEqual(-(estimate?.uncertaintyMs ?? 0));
  }, 90_000);
});
