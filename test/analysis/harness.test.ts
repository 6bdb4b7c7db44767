import { describe, expect, it } from 'vitest';
import { assessHarness, assessRunHarness, harnessMeasurementsOf, HARNESS_THRESHOLDS } from '../../src/analysis/harness.js';
import { summarize } from '../../src/analysis/summarize.js';
import { recordAt, runOf } from './records.js';
import type { HarnessProcess, HarnessReport, HarnessWarning, ProcessHealth } from '../../src/types/harness.js';
import { harnessGradeText, harnessWarningText } from '../../src/report/harness-text.js';

/** Hand-built self-reports: a process whose loop and CPU are well inside every threshold, unless overridden. */
function health(overrides: Partial<ProcessHealth> = {}): ProcessHealth {
  return { pid: 1, event_loop_delay_ms: { p50: 0.05, p99: 0.4, max: 2, samples: 10_000 }, cpu_s: 1, wall_s: 10, cpu_share_of_one_core: 0.1, ...overrides };
}

const quiet: HarnessProcess[] = [
  { name: 'client', role: 'client', ...health(), send_lag_p99_ms: 0.3 },
  { name: 'router', role: 'router', ...health() },
  { name: 'node-0', role: 'sim-server', node: 'http://127.0.0.1:1', ...health(), step_lateness_ms: { p50: 0.05, p99: 0.3, max: 1, steps: 500 } },
  { name: 'node-1', role: 'sim-server', node: 'http://127.0.0.1:2', ...health(), step_lateness_ms: { p50: 0.05, p99: 0.3, max: 1, steps: 500 } },
];
const idleHost = { cores: 2, samples: 40, interval_ms: 250, busy_share_mean: 0.4, busy_share_max: 0.7, share_of_samples_over_threshold: 0 };

describe('assessHarness', () => {
  it('is clean when every process and the host are within the thresholds', () => {
    const report = assessHarness({ processes: quiet, host_cpu: idleHost, missing: [] });
    expect(report.state).toBe('clean');
    expect(report.warnings).toEqual([]);
    expect(report.stages_flagged).toEqual({});
    expect(report.thresholds).toEqual(HARNESS_THRESHOLDS);
  });

  it('names a slow relay and the columns it can have inflated, and flags every node behind it', () => {
    const processes = quiet.map((process) => (process.name === 'router' ? { ...process, event_loop_delay_ms: { p50: 0.1, p99: 3.5, max: 40, samples: 9_000 } } : process));
    const report = assessHarness({ processes, host_cpu: idleHost, missing: [] });
    expect(report.state).toBe('suspect');
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings[0]?.process).toBe('router');
    expect(report.warnings[0]?.problem).toMatch(/event-loop delay p99 3.50 ms > 1 ms/);
    expect(report.stages_flagged['queue_time_in_router']).toEqual(['router']);
    expect(report.stages_flagged['prefill_time']).toBeUndefined();
    expect(report.nodes_flagged).toEqual({ 'http://127.0.0.1:1': ['router'], 'http://127.0.0.1:2': ['router'] });
  });

  it('flags only its own node when one simulated server falls behind its model', () => {
    const processes = quiet.map((process) => (process.name === 'node-1' ? { ...process, step_lateness_ms: { p50: 0.5, p99: 4, max: 9, steps: 500 } } : process));
    const report = assessHarness({ processes, host_cpu: idleHost, missing: [] });
    expect(report.warnings.map((warning) => warning.process)).toEqual(['node-1']);
    expect(report.nodes_flagged).toEqual({ 'http://127.0.0.1:2': ['node-1'] });
    expect(report.stages_flagged['prefill_time']).toEqual(['node-1']);
    expect(report.stages_flagged['queue_time_in_router']).toBeUndefined();
  });

  it('flags a saturated host, a process at one full core, and a late client', () => {
    const processes = quiet.map((process) => (process.name === 'client' ? { ...process, cpu_share_of_one_core: 0.97, send_lag_p99_ms: 4 } : process));
    const report = assessHarness({ processes, host_cpu: { ...idleHost, busy_share_mean: 0.95 }, missing: [] });
    const problems = report.warnings.map((warning) => `${warning.process}: ${warning.problem}`);
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(/client: CPU 97% of one core/);
    expect(problems.join('\n')).toMatch(/client: send lag p99 4.00 ms/);
    expect(problems.join('\n')).toMatch(/host: host CPU 95% busy/);
    expect(report.stages_flagged['send_lag']).toEqual(['client', 'host']);
  });
});

describe('the harness of a run (send lag from its records)', () => {
  const clientOnly = { processes: [{ name: 'client', role: 'client' as const, ...health() }], host_cpu: idleHost, missing: [] };

  it("adds the client's send lag p99 from the records and flags it over 1 ms", () => {
    expect(assessRunHarness(clientOnly, 0.0004).state).toBe('clean');
    const late = assessRunHarness(clientOnly, 0.003);
    expect(late.processes[0]?.send_lag_p99_ms).toBe(3);
    expect(late.warnings.map((warning) => warning.problem)).toEqual(['send lag p99 3.00 ms > 1 ms: requests left later than scheduled']);
  });

  it('leaves out the lag of requests max concurrency held back: the hold was asked for', () => {
    // Every other request waited 0.5 s for a free slot; the others left 0.1 ms late.
    const records = Array.from({ length: 20 }, (_, index) =>
      index % 2 === 0
        ? recordAt({ scheduledTime: index, arrivalTime: index + 0.0001, finishTime: index + 0.5 })
        : recordAt({ scheduledTime: index, arrivalTime: index + 0.5, dispatchTime: 1_700_000_000 + index + 0.5, heldForConcurrency: true, finishTime: index + 0.9 }),
    );
    const run = runOf(records);
    run.extras = { harness: clientOnly };
    const harness = summarize(run).harness;
    expect(harness?.state).toBe('clean');
    expect(harness?.processes[0]?.send_lag_p99_ms).toBeCloseTo(0.1, 3);
    // Held or not, a request that left 5 ms late is the client falling behind.
    records.push(recordAt({ scheduledTime: 21, arrivalTime: 21.005, finishTime: 21.2 }), recordAt({ scheduledTime: 22, arrivalTime: 22.005, finishTime: 22.2 }));
    expect(summarize(runOf(records, {})).harness).toBeUndefined();
    const lateRun = runOf(records);
    lateRun.extras = { harness: clientOnly };
    const late = summarize(lateRun).harness;
    expect(late?.processes[0]?.send_lag_p99_ms).toBeGreaterThan(4);
    expect(late?.warnings.map((warning) => warning.problem).join('\n')).toMatch(/send lag p99 [\d.]+ ms > 1 ms/);
    // Its bound on intended_latency is the lag plus the loop's delay.
    expect(late?.errorBounds['intended_latency']?.boundMs).toBeCloseTo((late?.processes[0]?.send_lag_p99_ms as number) + 0.4, 3);
  });

  it("counts requests servelab itself failed (harness_limit) under the harness: the run is SUSPECT and says so first", () => {
    const records = Array.from({ length: 10 }, (_, index) => recordAt({ scheduledTime: index, arrivalTime: index + 0.0001, finishTime: index + 0.5 }));
    const clean = runOf(records);
    clean.extras = { harness: clientOnly };
    expect(summarize(clean).harness?.state).toBe('clean');
    // The same run, two of whose requests the client could not even open (EMFILE), one the server refused.
    records.push(
      recordAt({ scheduledTime: 11, arrivalTime: 11.0001, success: false, error: 'harness_limit', errorMessage: "servelab's own limit: too many open files" }),
      recordAt({ scheduledTime: 12, arrivalTime: 12.0001, success: false, error: 'harness_limit', errorMessage: "servelab's own limit: too many open files" }),
      recordAt({ scheduledTime: 13, arrivalTime: 13.0001, success: false, error: 'network_error', errorMessage: 'ECONNRESET' }),
    );
    const limited = runOf(records);
    limited.extras = { harness: clientOnly };
    const harness = summarize(limited).harness;
    expect(harness?.state).toBe('suspect');
    expect(harness?.harnessLimitFailures).toBe(2);
    expect(harness?.warnings[0]).toMatchObject({ process: 'client', stages: [] });
    expect(harness?.warnings[0]?.problem).toMatch(/^2 requests failed at servelab's own limit \(harness_limit/);
    expect(harnessGradeText(harness as HarnessReport)).toMatch(/^servelab itself failed 2 requests \(harness_limit: its own file descriptors or memory, not the server\); error bound within 5% of every metric/);
    expect(harnessWarningText(harness?.warnings[0] as HarnessWarning)).not.toMatch(/affects/);
  });

  it('reads measurements back only when they have the expected shape', () => {
    expect(harnessMeasurementsOf(undefined)).toBeUndefined();
    expect(harnessMeasurementsOf({ harness: 'clean' })).toBeUndefined();
    expect(harnessMeasurementsOf({ harness: { processes: [] } })).toBeUndefined();
    expect(harnessMeasurementsOf({ harness: { processes: [], missing: [] } })).toEqual({ processes: [], host_cpu: null, missing: [] });
  });
});

describe('the grade weighs the harness error bound against the metrics it affects (issue 27)', () => {
  const client = (delayP99Ms: number, overrides: Partial<HarnessProcess> = {}): HarnessProcess => ({
    name: 'client',
    role: 'client',
    ...health({ event_loop_delay_ms: { p50: delayP99Ms / 4, p99: delayP99Ms, max: delayP99Ms * 3, samples: 10_000 } }),
    ...overrides,
  });
  /** A real engine: TTFT 130 ms, E2E 2.6 s, TPOT and ITL 25 ms, 100 output tokens. */
  const realEngine = {
    p50Ms: { ttft: 130, total_latency: 2600, tpot: 25, itl: 25, decode_time: 2470, intended_latency: 2601, send_lag: 0.3 },
    meanOutputTokens: 100,
  };

  it('a calm client against a server of hundreds of milliseconds is clean, though its send lag and loop delay are over 1 ms', () => {
    const report = assessHarness({ processes: [client(1.1, { send_lag_p99_ms: 1.23 })], host_cpu: idleHost, missing: [] }, HARNESS_THRESHOLDS, realEngine);
    expect(report.state).toBe('clean');
    expect(report.affected).toEqual([]);
    expect(report.errorBounds['ttft']).toEqual({ boundMs: 1.1, p50BoundMs: 0.275, valueMs: 130, p99ValueMs: 130, share: 0.008462, sources: ['client'] });
    expect(report.errorBounds['intended_latency']?.boundMs).toBeCloseTo(2.33, 6);
    // TPOT spreads the decode span's error over 99 gaps.
    expect(report.errorBounds['tpot']?.boundMs).toBeCloseTo(1.1 / 99, 3);
    // The raw thresholds still name the causes.
    expect(report.warnings.map((warning) => warning.problem)).toEqual([
      'event-loop delay p99 1.10 ms > 1 ms (max 3.3 ms)',
      'send lag p99 1.23 ms > 1 ms: requests left later than scheduled',
    ]);
  });

  it('a client starved of its core is suspect: its lateness is a large share of TTFT and E2E', () => {
    const report = assessHarness({ processes: [client(850, { cpu_share_of_one_core: 1 })], host_cpu: { ...idleHost, busy_share_mean: 0.99 }, missing: [] }, HARNESS_THRESHOLDS, realEngine);
    expect(report.state).toBe('suspect');
    expect(report.affected).toEqual(['total_latency', 'ttft', 'decode_time', 'tpot', 'intended_latency', 'itl']);
    expect(report.errorBounds['ttft']?.share).toBeCloseTo(850 / 130, 4);
    expect(report.stages_flagged['ttft']).toEqual(['client']);
  });

  it('a simulated cluster on 2 cores: affected, naming its sub-millisecond stages, while TTFT and E2E are not', () => {
    const processes: HarnessProcess[] = [
      client(1.55),
      { name: 'node-0', role: 'sim-server', node: 'http://127.0.0.1:1', ...health({ event_loop_delay_ms: null }), step_lateness_ms: { p50: 0.1, p99: 0.6, max: 3, steps: 900 } },
    ];
    // p50 and p99 as a 5 req/s run on this 2-core machine measured them.
    const values = {
      p50Ms: { ttft: 14, total_latency: 300, itl: 9, network_time: 0.2, tokenize_time: 2e-7, pure_queue_time: 0.8, prefill_time: 12, decode_time: 286 },
      p99Ms: { ttft: 48, total_latency: 480, itl: 34, network_time: 0.9, tokenize_time: 0, pure_queue_time: 7, prefill_time: 16, decode_time: 454 },
      meanOutputTokens: 32,
    };
    const report = assessHarness({ processes, host_cpu: idleHost, missing: [] }, HARNESS_THRESHOLDS, values);
    expect(report.state).toBe('affected');
    // tokenize_time is 0 but for float rounding (not modelled): nothing to weigh against, so it is not named. TTFT: 0.49 ms of its 14 ms p50,
    // 2.15 ms of its 48 ms p99.
    expect(report.affected).toEqual(['network_time', 'pure_queue_time', 'itl']);
    expect(report.errorBounds['ttft']?.share).toBeCloseTo(2.15 / 48, 6);
    expect(report.errorBounds['tokenize_time']?.share).toBeNull();
    expect(report.nodes_flagged).toEqual({ 'http://127.0.0.1:1': ['node-0', 'client'] });
  });

  it('the share is a setting: the same observations are clean at 20% and suspect at 1%', () => {
    const processes = [client(2)];
    const values = { p50Ms: { ttft: 25, total_latency: 400 } };
    expect(assessHarness({ processes, host_cpu: null, missing: [] }, { ...HARNESS_THRESHOLDS, metric_error_share: 0.2 }, values).state).toBe('clean');
    expect(assessHarness({ processes, host_cpu: null, missing: [] }, { ...HARNESS_THRESHOLDS, metric_error_share: 0.01 }, values).state).toBe('suspect');
    const run = runOf([recordAt({ scheduledTime: 0, arrivalTime: 0, firstTokenTime: 0.025, finishTime: 0.4 })], { requestRate: 1 });
    run.extras = { harness: { processes, host_cpu: null, missing: [] } };
    expect(summarize(run).harness?.state).toBe('suspect');
    run.config['harnessErrorShare'] = 0.2;
    expect(summarize(run).harness?.state).toBe('clean');
    expect(summarize(run).harness?.thresholds.metric_error_share).toBe(0.2);
  });
});
