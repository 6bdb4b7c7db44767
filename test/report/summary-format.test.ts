import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { isServelabError } from '../../src/errors/servelab-error.js';
import { parseJson, toJson } from '../../src/report/json-format.js';
import { readRunDirectory } from '../../src/report/run-directory.js';
import { SUMMARY_FORMAT_VERSION, buildSummaryFile } from '../../src/report/summary/summary-file.js';
import { summaryRenameTable } from '../../src/report/summary/summary-names.js';
import { writeRunFiles } from '../../src/report/write-run-files.js';
import type { HarnessMeasurements } from '../../src/types/harness.js';
import type { RunData } from '../../src/types/run.js';
import type { Summary } from '../../src/types/summary.js';
import { T0 } from '../analysis/records.js';
import { sampleRoutingRun } from './sample-run.js';

/** Maps whose keys are data (error classes, `field:reason`, column names, node URLs): their keys are not names. */
const DATA_KEYED = new Set(['metrics.counts.failedByClass', 'metrics.dataQuality.removedFields', 'metrics.harness.stagesFlagged', 'metrics.harness.nodesFlagged', 'metrics.harness.errorBounds']);

/** Every key of a parsed JSON value with its dotted path (`[]` for array items), data-keyed maps' keys left out. */
function keyPaths(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => keyPaths(item, `${path}[]`));
  if (value === null || typeof value !== 'object' || DATA_KEYED.has(path)) return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, item]) => {
    const child = path === '' ? key : `${path}.${key}`;
    return [child, ...keyPaths(item, child)];
  });
}

/** The sample routing run (three nodes, a crash and a restore) with a harness self-report and a notice. */
function fullRun(): RunData {
  const run = sampleRoutingRun();
  const measurements: HarnessMeasurements = {
    processes: [
      { name: 'client', role: 'client', pid: 1, event_loop_delay_ms: { p50: 0.05, p99: 0.4, max: 2, samples: 10_000 }, cpu_s: 1, wall_s: 10, cpu_share_of_one_core: 0.1 },
      {
        name: 'node-1',
        role: 'sim-server',
        node: 'http://127.0.0.1:30002',
        pid: 2,
        event_loop_delay_ms: null,
        cpu_s: 9.5,
        wall_s: 10,
        cpu_share_of_one_core: 0.95,
        // Late enough to move prefill_time (30 ms) by more than 5%, so the harness flags a column.
        step_lateness_ms: { p50: 0.05, p99: 5, max: 9, steps: 500 },
      },
    ],
    host_cpu: { cores: 2, samples: 40, interval_ms: 250, busy_share_mean: 0.4, busy_share_max: 0.7, share_of_samples_over_threshold: 0 },
    missing: [],
  };
  run.extras = { ...run.extras, harness: measurements };
  run.notices = [{ source: 'scraper', message: 'the metrics endpoint did not answer', time: T0 + 2 }];
  return run;
}

let directory: string;
let run: RunData;
let summary: Summary;
let written: Record<string, unknown>;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'servelab-summary-format-'));
  run = fullRun();
  summary = summarize(run, { slo: { ttftMs: 100, totalMs: 500 } });
  await writeRunFiles(run, summary, directory, ['summary', 'jsonl', 'config']);
  written = parseJson(await readFile(join(directory, 'summary.json'), 'utf8')) as Record<string, unknown>;
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('summary.json format 2: camelCase names with their units', () => {
  it('is format version 2, and every name in it is camelCase (no snake_case left outside maps keyed by data)', () => {
    expect(SUMMARY_FORMAT_VERSION).toBe(2);
    expect(written.formatVersion).toBe(2);
    const paths = keyPaths(written);
    // The run had every block whose names changed: harness, stages, routing, events, goodput, notices.
    for (const block of ['metrics.harness.hostCpu', 'metrics.concurrency.stages.inSystem', 'metrics.routing.nodes[].ttftSeconds', 'metrics.events[].before', 'metrics.goodput.slo', 'notices[].atSinceT0Seconds']) {
      expect(paths).toContain(block);
    }
    expect(paths.filter((path) => !/^[a-z][A-Za-z0-9]*$/.test(path.split('.').at(-1)?.replace('[]', '') ?? ''))).toEqual([]);
  });

  it('names carry units: seconds, epoch seconds, seconds after t0, milliseconds, per second, tokens', () => {
    const file = written as {
      run: Record<string, unknown>;
      events: Array<Record<string, unknown>>;
      metrics: {
        latencies: Record<string, { p50: number } | null>;
        offeredLoad: Record<string, unknown>;
        tokens: Record<string, unknown>;
        verdict: { evidence: Record<string, unknown> };
        harness: { processes: Array<Record<string, unknown>>; thresholds: Record<string, unknown> };
        events: Array<{ timeEpochSeconds: number; timeSinceT0Seconds: number; before: Record<string, unknown> }>;
      } & Record<string, unknown>;
    };
    expect(file.run.t0EpochSeconds).toBe(T0);
    expect(file.run.targetRequestsPerSecond).toBe(20);
    expect(file.events[0]).toEqual({ timeSinceT0Seconds: 3, kind: 'crash', node: 1 });
    expect(file.metrics.latencies.ttftSeconds?.p50).toBe(summary.latencies.ttft?.p50);
    expect(file.metrics.latencies.queueTimeInRouterSeconds?.p50).toBe(summary.latencies.queue_time_in_router?.p50);
    expect(Object.keys(file.metrics.latencies).every((name) => name.endsWith('Seconds'))).toBe(true);
    expect(file.metrics.firstArrivalEpochSeconds).toBe(summary.firstArrivalTime);
    expect(file.metrics.firstArrivalSinceT0Seconds).toBe(summary.firstArrivalSinceT0);
    expect(file.metrics.durationSeconds).toBe(summary.durationSeconds);
    expect(file.metrics.interTokenLatencySeconds).toEqual(summary.interTokenLatency);
    expect(file.metrics.offeredLoad.targetRequestsPerSecond).toBe(20);
    expect(file.metrics.offeredLoad.achievedRequestsPerSecond).toBe(summary.offeredLoad.achievedRate);
    expect(file.metrics.tokens.totalOutputTokens).toBe(summary.tokens.totalOutput);
    expect(file.metrics.verdict.evidence.servedRatePerSecond).toBe(summary.verdict.evidence?.served_rate_per_s);
    expect(file.metrics.verdict.evidence.windowStartSinceT0Seconds).toBe(summary.verdict.evidence?.window_start_s);
    expect(file.metrics.harness.processes.find((process) => process.name === 'node-1')?.cpuSeconds).toBe(9.5);
    expect(file.metrics.harness.thresholds.sendLagP99Ms).toBe(1);
    expect(file.metrics.events[0]?.timeEpochSeconds).toBe(T0 + 3);
    expect(file.metrics.events[0]?.timeSinceT0Seconds).toBe(3);
    expect(file.metrics.events[0]?.before.fromEpochSeconds).toBe(summary.events?.[0]?.before.from);
    // Keys that are data stay as they are: the harness flags columns by their requests.csv names.
    expect(Object.keys((file.metrics.harness as unknown as { stagesFlagged: object }).stagesFlagged)).toContain('prefill_time');
  });

  it('reads back into the in-memory names (servelab report, compare, analyzeResults)', async () => {
    const loaded = await readRunDirectory(directory);
    expect(loaded.summaryFile).toEqual(parseJson(toJson(buildSummaryFile(run, summary))));
    expect(loaded.run.info).toEqual(run.info);
    expect(loaded.run.events).toEqual(run.events);
    expect(loaded.run.notices).toEqual(run.notices);
    expect(loaded.run.extras).toEqual(run.extras);
  });

  it('still reads a format-1 summary.json, and refuses an unknown version naming the versions it reads', async () => {
    const v1Directory = join(directory, 'v1');
    await writeRunFiles(run, summary, v1Directory, ['jsonl', 'config']);
    await writeFile(join(v1Directory, 'summary.json'), toJson({ ...buildSummaryFile(run, summary), formatVersion: 1 }));
    const loaded = await readRunDirectory(v1Directory);
    expect(loaded.summaryFile?.formatVersion).toBe(1);
    expect(loaded.summaryFile?.metrics.goodput?.slo).toEqual({ ttftMs: 100, totalMs: 500 });
    expect(loaded.run.info).toEqual(run.info);
    expect(loaded.run.events).toEqual(run.events);

    await writeFile(join(v1Directory, 'summary.json'), toJson({ ...written, formatVersion: 3 }));
    const error: unknown = await readRunDirectory(v1Directory).catch((caught: unknown) => caught);
    expect(isServelabError(error) && error.code).toBe('INVALID_RUN_DIRECTORY');
    expect((error as Error).message).toMatch(/format version 3 .*reads versions 1 and 2/);
  });

  it('docs/metrics.md lists every rename in its v1 → v2 table', async () => {
    const docs = await readFile(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
    const dotted = (path: string): string => path.replaceAll('/*', '[]').replaceAll('/', '.');
    const missing = summaryRenameTable().filter(({ v1, v2 }) => !docs.includes(`| \`${dotted(v1)}\` | \`${dotted(v2)}\` |`));
    expect(missing).toEqual([]);
  });
});
