import { withholdFromChildren } from '../cluster/process/child-env.js';
import { warmupNotices } from './warmup-notices.js';
import type { NodeTestConfig } from '../config/schema.js';
import { anchoredSystemClock, type Clock } from '../clock/clock.js';
import type { ServerHandle } from '../types/cluster.js';
import type { RequestRecord } from '../types/record.js';
import { buildWorkload, targetRateOf } from './build-workload.js';
import { checkSimSettings } from './check-sim-settings.js';
import { flushServerCache } from './flush-cache.js';
import { HarnessWatch } from './harness-watch.js';
import { raceAbort, throwIfInterrupted } from './interruption.js';
import { launchNodeTarget } from './launch-node-target.js';
import { measureLoad } from './measure-load.js';
import type { MeasuredRun, RunOptions } from './measured-run.js';
import type { RunProgress } from './progress.js';
import { watchRunProcesses } from './process-watch.js';
import { createRunDirectory } from './run-directory.js';
import { RunLog } from './run-log.js';
import { collectServerMetrics, type ServerMetricsCollection } from './server-metrics.js';
import { joinRunRequestLogs } from './server-request-logs.js';

/** Reports a phase change with no request counts yet. */
export function phaseReporter(options: RunOptions, clock: Clock, startedMs: number, totalRequests: number) {
  return (phase: RunProgress['phase'], message?: string): void =>
    options.onProgress?.({ phase, message, totalRequests, sent: 0, inFlight: 0, completed: 0, failed: 0, elapsedMs: clock.nowMs() - startedMs });
}

/**
 * A node test's measurement: one server, requests sent straight to it (SPEC §1). Launches the target, offers the load,
 * records every request's lifecycle, and stops the server; analysis and files come after.
 */
export async function measureNodeTest(config: NodeTestConfig, options: RunOptions = {}): Promise<MeasuredRun> {
  // Re-anchored at each run's start: a wall-clock step earlier in this process must not shift this run (see anchoredSystemClock).
  const clock = options.clock ?? anchoredSystemClock();
  const startedMs = clock.nowMs();
  const report = phaseReporter(options, clock, startedMs, config.numPrompts);
  // Everything that can be checked (the dataset, the arrival trace, the engine profile) is checked before anything is
  // launched.
  const workload = await buildWorkload(config);
  // The API key is for the load generator only: no server, router or tap process gets the variable.
  withholdFromChildren(config.apiKeyEnv);
  await checkSimSettings(config);
  const directory = await createRunDirectory({ outputDir: config.outputDir, resultsRoot: config.resultsRoot, runId: config.runId, testLevel: 'node' });
  const journal = options.journal;
  await journal?.open({ outputDirectory: directory.path, runId: directory.runId, testLevel: 'node', target: config.target, requestRate: targetRateOf(config), config: { ...config } });
  const log = new RunLog(journal);
  const { watch, signal } = watchRunProcesses(clock, log, config.onProcessExit, options.signal);

  let server: ServerHandle | undefined;
  let serverMetrics: ServerMetricsCollection | undefined;
  const harness = new HarnessWatch();
  try {
    throwIfInterrupted(options.signal);
    report('starting', config.target === 'attach' ? `attaching to ${config.url}` : `launching the ${config.target} server`);
    server = await raceAbort(launchNodeTarget(config, directory.logsPath), options.signal, 'the server was starting');
    if (config.flushCache) await flushServerCache(server.url);
    throwIfInterrupted(options.signal);
    const target = server;
    watch.watch('server', target.exited, 0);
    const metrics = await collectServerMetrics([`${target.url}/metrics`], clock, { directory: directory.path, onNotice: (notice) => log.notice(notice) });
    serverMetrics = metrics;
    // In a node test the client talks to the server directly: the "router send" is the arrival itself.
    const completeRecord = (record: RequestRecord): RequestRecord => {
      record.routerSendTime ??= record.arrivalTime;
      record.host ??= target.url;
      return record;
    };
    const load = await measureLoad({
      config,
      baseUrl: target.url,
      workload,
      clock,
      runId: directory.runId,
      startedMs,
      signal,
      onProgress: options.onProgress,
      onScheduleStart: () => harness.start(config.target === 'sim' ? [{ name: 'sim-server', role: 'sim-server', url: target.url, node: target.url }] : []),
      ...(journal === undefined ? {} : { onStart: (t0: number) => journal.start(t0), onRecord: (record: RequestRecord) => journal.record(completeRecord(record)) }),
    });
    const harnessMeasurements = await harness.finish([]);
    for (const record of load.records) completeRecord(record);
    watch.stop();
    report('writing', `writing ${directory.path}`);
    await log.attempt('scraper', 'the scraped server metrics could not be written (server-metrics.csv)', () => metrics.finish(load.startTime), 0);
    // SGLang writes a request's log line after it answered: stop the server first so that its last lines are on disk.
    await server.stop();
    const requestLogs = await log.attempt(
      'request-logs',
      "the server's request log could not be joined to the records",
      () =>
        joinRunRequestLogs({
          servers: [target],
          attachedDirectory: config.serverRequestLogDir,
          records: load.records,
          warmupRecords: load.warmupRecords,
          runLogsPath: directory.logsPath,
        }),
      undefined,
    );
    const notices = [...workload.notices, ...warmupNotices(load.warmupRecords), ...(requestLogs?.notice === undefined ? [] : [requestLogs.notice])];
    const extras: Record<string, unknown> = { harness: harnessMeasurements };
    if (notices.length > 0) extras.notices = notices;
    if (requestLogs !== undefined) extras.serverRequestLogs = requestLogs.join;
    return {
      runId: directory.runId,
      outputDirectory: directory.path,
      testLevel: 'node',
      target: config.target,
      requestRate: targetRateOf(config),
      config: { ...config },
      load,
      events: log.events,
      slo: config.slo,
      extras,
      notices: log.notices,
      ...(journal === undefined ? {} : { journal }),
    };
  } finally {
    harness.close();
    watch.stop();
    await serverMetrics?.stop().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    if (journal !== undefined) await journal.close();
  }
}
