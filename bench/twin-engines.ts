/**
 * Issue 26's table: the virtual-time twin's error on engines servelab did not develop it against, each treated as a
 * black box that only speaks HTTP.
 *
 * Engines: servelab's own simulated server launched as a separate process (`servelab sim-server`), once as SGLang
 * schedules by default (prefill steps apart) and once with `--enable-mixed-chunk`, and the foreign engine
 * (bench/foreign-engine: Python, decode-first mixed steps in 64-token chunks, a step law that is not servelab's form).
 * For each: `servelab calibrate --url` (the product's entry point, its defaults), a burst for capacity, real node tests
 * at 20%, 50%, 80% and 95% of it, then the twin (`--target sim --virtual-time`, the calibrated profile, only the
 * server's limits from its /server_info as flags) on the same workloads and seeds; the error of each metric against
 * the 15% target. Then `servelab calibrate --from-runs` on the four real runs (the 95% one held out) with the measured
 * profile as the start, and the twin once more with the refit profile and the scheduling the refit identified.
 *
 * Nothing here measures through servelab's functions: engines and servelab are processes, as a user runs them. The
 * error table's marks are calibrate's own verdict (validationVerdict), so the two cannot disagree; its '?' is the twin
 * run's own warning (summary.json extras.twinSensitivity), so the table shows whether the twin said how far to trust it.
 *
 * Run: npm run bench -- twin-engines   (about 10 minutes on a quiet machine)
 *   TWIN_ENGINES=sim-separate,sim-mixed,foreign picks engines; BENCH_RUN_SECONDS (default 12) sets each real run's
 *   length (at least 40, at most 240 requests); BENCH_KEEP=1 keeps the run directories (printed);
 *   TWIN_ENGINES_REUSE=DIR redoes only the twin's part (refit and virtual-time runs) on the real runs a kept DIR holds
 *   (each engine's measurements.json lets a newer servelab refit its profiles first: calibrate --from-measurements).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { runNoise, type RunNoise, VALIDATION_TARGET_PERCENT, validationVerdict } from '../src/experiments/validation-noise.js';
import type { Summary } from '../src/types/summary.js';
import { startForeignEngine } from './foreign-engine/start-foreign-engine.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const RUN_SECONDS = Number(process.env['BENCH_RUN_SECONDS'] ?? 12);
const FRACTIONS = [0.2, 0.5, 0.8, 0.95];
const TARGET_PERCENT = VALIDATION_TARGET_PERCENT;
const WORKLOAD = ['--dataset-name', 'random-ids', '--random-input-len', '256', '--random-range-ratio', '0.25', '--random-output-len', '32', '--warmup-requests', '2'];
/** The limits every engine is started with (small, so calibration and the runs stay short on a shared machine). */
const LIMITS = { maxRunningRequests: 16, chunkedPrefillSize: 512, maxTotalTokens: 16384 };
const SIM_PROFILE = 'llama-3.2-1b-l4';

interface Engine {
  name: string;
  what: string;
  start(): Promise<{ url: string; stop(): Promise<void> }>;
}

const ENGINES: Engine[] = [
  { name: 'sim-separate', what: `servelab sim-server (${SIM_PROFILE}), prefill steps apart from decode`, start: () => startSimServer([]) },
  { name: 'sim-mixed', what: `servelab sim-server (${SIM_PROFILE}) --enable-mixed-chunk`, start: () => startSimServer(['--enable-mixed-chunk']) },
  {
    name: 'foreign',
    what: 'bench/foreign-engine (Python; decode-first, 64-token chunks, sqrt/log/power step law)',
    start: () =>
      startForeignEngine(['--max-running-requests', String(LIMITS.maxRunningRequests), '--chunked-prefill-size', String(LIMITS.chunkedPrefillSize), '--max-total-tokens', String(LIMITS.maxTotalTokens)]),
  },
];

function startSimServer(extra: string[]): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [CLI, 'sim-server', '--port', '0', '--profile', SIM_PROFILE, '--max-running-requests', String(LIMITS.maxRunningRequests), '--chunked-prefill-size', String(LIMITS.chunkedPrefillSize), '--max-total-tokens', String(LIMITS.maxTotalTokens), ...extra],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout as NonNullable<ChildProcess['stdout']> }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match !== null)
        resolve({
          url: match[1] as string,
          stop: async () => {
            child.kill('SIGTERM');
            await exited;
          },
        });
    });
    child.once('exit', (code) => reject(new Error(`sim-server exited with ${code} before serving`)));
  });
}

/** The foreign engine's step counters (the law's seconds, how late steps ended); null for engines without them. */
async function lateness(url: string): Promise<{ lawS: number; lateS: number; gapS: number; gapSteps: number } | null> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counter = (name: string): number | undefined => {
    const match = new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text);
    return match === null ? undefined : Number(match[1]);
  };
  const lawS = counter('foreign_engine_law_seconds_total');
  const lateS = counter('foreign_engine_late_seconds_total');
  return lawS === undefined || lateS === undefined ? null : { lawS, lateS, gapS: counter('foreign_engine_gap_seconds_total') ?? Number.NaN, gapSteps: counter('foreign_engine_gap_steps_total') ?? Number.NaN };
}

/** The engine's loop time between back-to-back steps over an interval, in ms a step: what calibrate's between-step reading estimates. */
function gapText(before: { gapS: number; gapSteps: number }, after: { gapS: number; gapSteps: number }): string {
  const steps = after.gapSteps - before.gapSteps;
  return Number.isFinite(steps) && steps > 0 ? `; its loop took ${(((after.gapS - before.gapS) / steps) * 1000).toFixed(3)} ms between back-to-back steps (${steps} steps)` : '';
}

/**
 * How often a sim-server's real-time stepper fell more than 200 ms behind its model and restarted its timeline at the
 * wall clock (src/engine/http/real-time-stepper.ts): each is a stall of this host that the server's requests paid and
 * the twin cannot; null for engines without the count.
 */
async function reanchors(url: string): Promise<number | null> {
  const info = (await (await fetch(`${url}/server_info`)).json()) as { servelab_step_lateness_ms?: { reanchors?: number } };
  return info.servelab_step_lateness_ms?.reanchors ?? null;
}

function servelab(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`servelab ${args.slice(0, 3).join(' ')} exited ${code}: ${stderr.trim()}`))));
  });
}

interface Metrics {
  throughput: number;
  ttftP50: number;
  ttftP90: number;
  tpotP50: number;
  e2eP50: number;
  e2eP90: number;
  /** Diagnostic, not in the target: the server's TTFT (queue entry to first token), without the client's path. */
  serverTtftP90: number;
  /**
   * The run's own 95% bootstrap interval over its requests (ms) for each latency of the target, from summary.json's
   * precision (docs/statistics.md); throughput has none. A real run of 40-240 requests is itself uncertain: a twin
   * value inside this interval cannot be told from the server by that run.
   */
  intervals: Partial<Record<Exclude<keyof Metrics, 'serverTtftP90' | 'intervals' | 'twinBand'>, RunNoise>>;
  /**
   * A twin run's own statement of how far to trust each figure (summary.json extras.twinSensitivity): the figure with
   * every step priced dearer and cheaper by the profile's held-out step error, and whether the twin flagged it as moving
   * more than the target (written to twin-engines.csv beside the figures).
   */
  twinBand: Partial<Record<Exclude<keyof Metrics, 'serverTtftP90' | 'intervals' | 'twinBand'>, { low: number; high: number; untrusted: boolean }>>;
}
/** The metrics of the 15% target. */
const METRIC_NAMES: Record<Exclude<keyof Metrics, 'serverTtftP90' | 'intervals' | 'twinBand'>, string> = { throughput: 'thr', ttftP50: 'TTFT p50', ttftP90: 'TTFT p90', tpotP50: 'TPOT p50', e2eP50: 'E2E p50', e2eP90: 'E2E p90' };

interface TwinSensitivityExtra {
  metrics: Record<string, { atMinus: number; atPlus: number }>;
  untrusted: { metric: string }[];
}

function readMetrics(directory: string): Metrics {
  const summary = JSON.parse(readFileSync(join(directory, 'summary.json'), 'utf8')) as { metrics: Record<string, unknown>; extras?: { twinSensitivity?: TwinSensitivityExtra } };
  const metrics = summary.metrics;
  // The twin's band in this table's units: latencies are seconds in summary.json, ms here; throughput is req/s in both.
  const twinBand: Metrics['twinBand'] = {};
  const sensitivity = summary.extras?.twinSensitivity;
  for (const key of Object.keys(METRIC_NAMES) as (keyof typeof METRIC_NAMES)[]) {
    const figure = sensitivity?.metrics[key];
    if (sensitivity === undefined || figure === undefined) continue;
    const scale = key === 'throughput' ? 1 : 1000;
    twinBand[key] = { low: Math.min(figure.atMinus, figure.atPlus) * scale, high: Math.max(figure.atMinus, figure.atPlus) * scale, untrusted: sensitivity.untrusted.some((entry) => entry.metric === key) };
  }
  const latencies = metrics['latencies'] as Record<string, { p50: number; p90: number }>;
  // The interval calibrate's validation reads (runNoise), in ms like the rest of this table.
  const intervals: Metrics['intervals'] = {};
  for (const key of ['ttftP50', 'ttftP90', 'tpotP50', 'e2eP50', 'e2eP90'] as const) {
    const noise = runNoise(metrics as unknown as Summary, key);
    if (noise !== undefined) intervals[key] = { ...noise, low: noise.low * 1000, high: noise.high * 1000 };
  }
  return {
    throughput: (metrics['throughput'] as { requestsPerSecond: number }).requestsPerSecond,
    ttftP50: (latencies['ttftSeconds'] as { p50: number }).p50 * 1000,
    ttftP90: (latencies['ttftSeconds'] as { p90: number }).p90 * 1000,
    tpotP50: (latencies['tpotSeconds'] as { p50: number }).p50 * 1000,
    e2eP50: (latencies['totalLatencySeconds'] as { p50: number }).p50 * 1000,
    e2eP90: (latencies['totalLatencySeconds'] as { p90: number }).p90 * 1000,
    serverTtftP90: ((latencies['serverTtftSeconds'] as { p90: number } | undefined)?.p90 ?? Number.NaN) * 1000,
    intervals,
    twinBand,
  };
}

interface Row {
  engine: string;
  twin: string;
  fraction: number;
  rate: number;
  real: Metrics;
  twinMetrics: Metrics;
}

interface Plan {
  /** The server's limits as flags, from its /server_info. */
  limits: string[];
  capacityRps: number;
  points: { fraction: number; rate: number; prompts: number; seed: number }[];
}

const run = (directory: string, name: string, rate: string, prompts: number, seed: number, target: string[]): Promise<string> =>
  servelab(['node', ...WORKLOAD, '--seed', String(seed), '--request-rate', rate, '--num-prompts', String(prompts), '--output-dir', join(directory, name), '--progress', 'off', '--quiet', ...target]);

/** The engine's part: calibration, capacity and the real runs; the plan is kept (plan.json) for TWIN_ENGINES_REUSE. */
async function realPhase(engine: Engine, directory: string): Promise<Plan> {
  const server = await engine.start();
  try {
    const info = (await (await fetch(`${server.url}/server_info`)).json()) as Record<string, number>;
    const limits = [
      '--max-running-requests', String(info['max_running_requests']),
      '--chunked-prefill-size', String(info['chunked_prefill_size']),
      '--max-total-tokens', String(info['max_total_num_tokens'] ?? info['max_total_tokens']),
    ];
    const calibrationStartedMs = performance.now();
    const lateBeforeCalibration = await lateness(server.url);
    const calibration = await servelab(['calibrate', '--url', server.url, '--output', join(directory, 'roofline.json'), '--measured-output', join(directory, 'measured.json'), '--measurements-output', join(directory, 'measurements.json'), '--quiet']);
    const lateAfterCalibration = await lateness(server.url);
    // The same share as each real run's below: a calibration made while the host slowed the engine more (or less) than
    // during the runs prices every step dear (or cheap), and near capacity queueing multiplies that.
    const calibrationLate =
      lateBeforeCalibration === null || lateAfterCalibration === null
        ? ''
        : `; its steps ended ${(((lateAfterCalibration.lateS - lateBeforeCalibration.lateS) / Math.max(lateAfterCalibration.lawS - lateBeforeCalibration.lawS, 1e-9)) * 100).toFixed(1)}% later than its law meanwhile${gapText(lateBeforeCalibration, lateAfterCalibration)}`;
    process.stdout.write(`  ${engine.name}: calibrated in ${((performance.now() - calibrationStartedMs) / 1000).toFixed(0)} s${calibrationLate}\n${calibration.replace(/^/gm, '    ').trimEnd()}\n`);
    const attach = ['--target', 'attach', '--url', server.url];
    await run(directory, 'burst', 'inf', 200, 1, attach);
    const capacityRps = readMetrics(join(directory, 'burst')).throughput;
    process.stdout.write(`  ${engine.name}: capacity ${capacityRps.toFixed(2)} req/s (a burst of 200)\n`);
    const points = FRACTIONS.map((fraction, index) => {
      const rate = fraction * capacityRps;
      return { fraction, rate, prompts: Math.round(Math.max(40, Math.min(240, rate * RUN_SECONDS))), seed: 11 + index };
    });
    for (const point of points) {
      const before = await lateness(server.url);
      const reanchorsBefore = await reanchors(server.url);
      await run(directory, `real-${point.fraction}`, point.rate.toFixed(4), point.prompts, point.seed, attach);
      const after = await lateness(server.url);
      const reanchorsAfter = await reanchors(server.url);
      if (before !== null && after !== null) {
        const overPercent = ((after.lateS - before.lateS) / Math.max(after.lawS - before.lawS, 1e-9)) * 100;
        process.stdout.write(`  ${engine.name} at ${point.fraction}x: its steps ended ${overPercent.toFixed(1)}% later than its law (this machine's load)${gapText(before, after)}\n`);
      }
      if (reanchorsBefore !== null && reanchorsAfter !== null) {
        process.stdout.write(`  ${engine.name} at ${point.fraction}x: the server fell more than 200 ms behind its model ${reanchorsAfter - reanchorsBefore} times (this machine's stalls)\n`);
      }
    }
    const plan = { limits, capacityRps, points };
    writeFileSync(join(directory, 'plan.json'), `${JSON.stringify(plan, null, 1)}\n`);
    return plan;
  } finally {
    await server.stop();
  }
}

/** The twin's part, in virtual time on the real runs' files: the two calibrated profiles, then the refit from the runs. */
async function twinPhase(engineName: string, directory: string, plan: Plan): Promise<Row[]> {
  const twins: { label: string; profile: string; extra: string[] }[] = [
    { label: 'measured', profile: join(directory, 'measured.json'), extra: [] },
    { label: 'roofline', profile: join(directory, 'roofline.json'), extra: [] },
  ];
  const refit = await servelab(['calibrate', '--from-runs', ...plan.points.map((point) => join(directory, `real-${point.fraction}`)), '--profile', join(directory, 'measured.json'), '--output', join(directory, 'refit.json'), ...plan.limits, '--quiet']);
  process.stdout.write(`${refit.replace(/^/gm, '    ').trimEnd()}\n`);
  twins.push({ label: 'refit', profile: join(directory, 'refit.json'), extra: refit.includes('run the twin with --enable-mixed-chunk') ? ['--enable-mixed-chunk'] : [] });
  const rows: Row[] = [];
  for (const twin of twins) {
    for (const point of plan.points) {
      const name = `twin-${twin.label}-${point.fraction}`;
      await run(directory, name, point.rate.toFixed(4), point.prompts, point.seed, ['--target', 'sim', '--virtual-time', '--profile', twin.profile, ...plan.limits, ...twin.extra]);
      rows.push({ engine: engineName, twin: twin.label + (twin.extra.length > 0 ? ' +mixed' : ''), fraction: point.fraction, rate: point.rate, real: readMetrics(join(directory, `real-${point.fraction}`)), twinMetrics: readMetrics(join(directory, name)) });
    }
  }
  return rows;
}

function printTable(rows: Row[], root: string): void {
  const keys = Object.keys(METRIC_NAMES) as (keyof typeof METRIC_NAMES)[];
  const percent = (twin: number, real: number): number => ((twin - real) / real) * 100;
  const signed = (error: number): string => `${error >= 0 ? '+' : ''}${error.toFixed(1)}%`;
  /** calibrate's verdict (validationVerdict): '' within the target, '~' within the real run's own noise, '!' a miss. */
  const MARKS = { 'within target': '', 'within noise': '~', miss: '!' } as const;
  const mark = (row: Row, key: (typeof keys)[number]): '' | '~' | '!' =>
    MARKS[validationVerdict(percent(row.twinMetrics[key], row.real[key]), row.twinMetrics[key], row.real.intervals[key], TARGET_PERCENT)];
  /** A figure outside the target that the twin's own run had flagged as untrusted at this load (its band's '?'). */
  const flagged = (row: Row, key: (typeof keys)[number]): boolean =>
    Math.abs(percent(row.twinMetrics[key], row.real[key])) > TARGET_PERCENT && row.twinMetrics.twinBand[key]?.untrusted === true;
  // The server's TTFT p90 beside the target's columns: where it agrees and the client's TTFT p90 does not, the miss is
  // the path between client and server (on a loaded host, its tail), not the engine's model.
  const header = ['engine', 'twin', 'load', ...keys.map((key) => METRIC_NAMES[key]), 'worst', 'server TTFT p90'];
  const lines: string[][] = [];
  const csv = ['engine,twin_profile,fraction,rate_rps,metric,real,twin,error_percent,real_low,real_high,twin_band_low,twin_band_high,twin_untrusted'];
  for (const row of rows) {
    const errors = keys.map((key) => percent(row.twinMetrics[key], row.real[key]));
    const worst = Math.max(...errors.map(Math.abs));
    lines.push([
      row.engine,
      row.twin,
      `${row.fraction.toFixed(2)}x ${row.rate.toFixed(1)}/s`,
      ...errors.map((error, index) => `${signed(error)}${mark(row, keys[index] as (typeof keys)[number])}${flagged(row, keys[index] as (typeof keys)[number]) ? '?' : ''}`),
      `${worst.toFixed(1)}%`,
      signed(percent(row.twinMetrics.serverTtftP90, row.real.serverTtftP90)),
    ]);
    for (const key of [...keys, 'serverTtftP90'] as const) {
      const interval = key === 'serverTtftP90' ? undefined : row.real.intervals[key];
      const band = key === 'serverTtftP90' ? undefined : row.twinMetrics.twinBand[key];
      csv.push(
        [row.engine, row.twin, row.fraction, row.rate.toFixed(3), key, row.real[key].toFixed(3), row.twinMetrics[key].toFixed(3), percent(row.twinMetrics[key], row.real[key]).toFixed(2), interval?.low.toFixed(3) ?? '', interval?.high.toFixed(3) ?? '', band?.low.toFixed(3) ?? '', band?.high.toFixed(3) ?? '', band === undefined ? '' : String(band.untrusted)].join(','),
      );
    }
  }
  const widths = header.map((cell, index) => Math.max(cell.length, ...lines.map((line) => (line[index] as string).length)));
  process.stdout.write(
    `\nTwin error against the real engine (twin - real) / real; outside the ${TARGET_PERCENT}% target, "~" marks a twin value inside the real run's own 95% interval over its requests (that run cannot tell them apart) and "!" one outside it, and "?" a figure the twin's own run had flagged as untrusted at that load (its sensitivity to the profile's held-out step error exceeds the target) (server TTFT p90: a diagnostic, not in the target).\n`,
  );
  for (const line of [header, ...lines]) process.stdout.write(`${line.map((cell, index) => cell.padEnd(widths[index] as number)).join('  ')}\n`);
  const within = rows.filter((row) => keys.every((key) => Math.abs(percent(row.twinMetrics[key], row.real[key])) <= TARGET_PERCENT)).length;
  const withinNoise = rows.filter((row) => keys.some((key) => mark(row, key) === '~') && keys.every((key) => mark(row, key) !== '!')).length;
  process.stdout.write(`${within} of ${rows.length} rows within ${TARGET_PERCENT}% on every metric; ${withinNoise} more with every figure outside it within the real run's own noise (~).\n`);
  // Whether the twin says how far to trust it: a miss on a figure its own run called trustworthy is the twin's fault twice.
  const figures = rows.flatMap((row) => keys.map((key) => ({ row, key })));
  const misses = figures.filter(({ row, key }) => Math.abs(percent(row.twinMetrics[key], row.real[key])) > TARGET_PERCENT);
  const trusted = figures.filter(({ row, key }) => row.twinMetrics.twinBand[key]?.untrusted === false);
  const trustedMisses = misses.filter(({ row, key }) => row.twinMetrics.twinBand[key]?.untrusted === false);
  process.stdout.write(
    `The twin's own warning: ${misses.filter(({ row, key }) => flagged(row, key)).length} of ${misses.length} figures outside the target were ones its run had flagged as untrusted (?); ` +
      `${trustedMisses.length} of the ${trusted.length} figures it called trustworthy missed${trustedMisses.length === 0 ? '' : ` (${trustedMisses.map(({ row, key }) => `${row.engine} ${row.twin} ${row.fraction}x ${METRIC_NAMES[key]}`).join(', ')})`}.\n`,
  );
  writeFileSync(join(root, 'twin-engines.csv'), `${csv.join('\n')}\n`);
}

const selected = (process.env['TWIN_ENGINES'] ?? ENGINES.map((engine) => engine.name).join(',')).split(',');
const reuse = process.env['TWIN_ENGINES_REUSE'];
const root = reuse ?? (await mkdtemp(join(tmpdir(), 'servelab-twin-engines-')));
process.stdout.write(`load average at start: ${loadavg().map((value) => value.toFixed(1)).join(' ')} (the real runs share this machine's cores with the engines)\n`);
const rows: Row[] = [];
for (const engine of ENGINES.filter((candidate) => selected.includes(candidate.name))) {
  process.stdout.write(`\n${engine.name}: ${engine.what}${reuse === undefined ? '' : ` (real runs reused from ${reuse})`}\n`);
  const directory = join(root, engine.name);
  try {
    const plan = reuse === undefined ? await realPhase(engine, directory) : (JSON.parse(readFileSync(join(directory, 'plan.json'), 'utf8')) as Plan);
    rows.push(...(await twinPhase(engine.name, directory, plan)));
  } catch (error) {
    process.stdout.write(`  ${engine.name} failed: ${(error as Error).message}\n`);
  }
}
printTable(rows, root);
process.stdout.write(`load average at end: ${loadavg().map((value) => value.toFixed(1)).join(' ')}\n`);
if (process.env['BENCH_KEEP'] === '1' || reuse !== undefined) process.stdout.write(`runs and twin-engines.csv (every figure, real and twin) kept in ${root}\n`);
else await rm(root, { recursive: true, force: true });
