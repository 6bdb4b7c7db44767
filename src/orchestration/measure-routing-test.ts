import { withholdFromChildren } from '../cluster/process/child-env.js';
import { warmupNotices } from './warmup-notices.js';
import { join } from 'node:path';
import { anchoredSystemClock } from '../clock/clock.js';
import { failureActions } from '../config/routing-test-config.js';
import type { RoutingTestConfig } from '../config/schema.js';
import { FailureExecutor } from '../cluster/failures/failure-executor.js';
import { attachServer } from '../cluster/launchers/attach/attach-server.js';
import { launchTaps, type LaunchedTaps } from '../cluster/launchers/taps/launch-taps.js';
import type { ServerHandle } from '../types/cluster.js';
import type { RequestRecord } from '../types/record.js';
import { buildWorkload, targetRateOf } from './build-workload.js';
import { checkSimSettings } from './check-sim-settings.js';
import { flushServerCache } from './flush-cache.js';
import { raceAbort, throwIfInterrupted } from './interruption.js';
import { HarnessWatch } from './harness-watch.js';
import { joinTapRecords } from './join-tap-records.js';
import { joinRunRequestLogs } from './server-request-logs.js';
import { launchCluster } from './launch-cluster.js';
import { launchRouter, routerTracesItself, type LaunchedRouter } from './launch-router.js';
import { measureLoad } from './measure-load.js';
import { phaseReporter } from './measure-node-test.js';
import type { MeasuredRun, RunOptions } from './measured-run.js';
import { watchRunProcesses } from './process-watch.js';
import { createRunDirectory } from './run-directory.js';
import { RunLog } from './run-log.js';
import { collectServerMetrics, type ServerMetricsCollection } from './server-metrics.js';
import { collectTraceDuringRun, type TraceCollector } from './trace-collector.js';

/**
 * A routing test's measurement: one router in front of N servers (SPEC §1). The client sends to the router at the
 * total arrival rate; a tracing tap in front of each server records when the router forwarded each request and where.
 * Everything launched is stopped before this returns.
 */
export async function measureRoutingTest(config: RoutingTestConfig, options: RunOptions = {}): Promise<MeasuredRun> {
  // Re-anchored at each run's start: a wall-clock step earlier in this process must not shift this run (see anchoredSystemClock).
  const clock = options.clock ?? anchoredSystemClock();
  const startedMs = clock.nowMs();
  const report = phaseReporter(options, clock, startedMs, config.numPrompts);
  const workload = await buildWorkload(config);
  // The API key is for the load generator only: no server, router or tap process gets the variable.
  withholdFromChildren(config.apiKeyEnv);
  await checkSimSettings(config);
  const directory = await createRunDirectory({ outputDir: config.outputDir, resultsRoot: config.resultsRoot, runId: config.runId, testLevel: 'routing' });
  const journal = options.journal;
  await journal?.open({ outputDirectory: directory.path, runId: directory.runId, testLevel: 'routing', target: config.target, requestRate: targetRateOf(config), config: { ...config } });
  const attachedRouterOnly = config.target === 'attach' && config.url !== undefined;
  const log = new RunLog(journal);
  const { watch, signal, stoppedEarly } = watchRunProcesses(clock, log, config.onProcessExit, options.signal);

  let servers: ServerHandle[] = [];
  let taps: LaunchedTaps | undefined;
  let router: LaunchedRouter | undefined;
  let failures: FailureExecutor | undefined;
  let serverMetrics: ServerMetricsCollection | undefined;
  let trace: TraceCollector | undefined;
  const harness = new HarnessWatch();
  // servelab's own builtin router reports on itself; a router servelab does not own (smg, sglang-router) does not.
  const ownRouter = !attachedRouterOnly && config.router === 'builtin';
  try {
    throwIfInterrupted(options.signal);
    if (attachedRouterOnly) {
      report('starting', `attaching to the router at ${config.url}`);
      router = { handle: await attachServer(config.url as string, 'router') };
    } else {
      report('starting', config.target === 'attach' ? 'checking the attached servers' : `launching ${config.numGpus} ${config.target} servers`);
      servers = await raceAbort(stoppable(launchCluster(config, directory.logsPath)), options.signal, 'the servers were starting').then((group) => group.servers);
      const serverUrls = servers.map((server) => server.url);
      // A router servelab owns traces itself; taps stand in front of the servers only for routers it does not own.
      if (config.taps && !routerTracesItself(config)) {
        report('starting', 'starting the tracing taps');
        taps = await launchTaps({ upstreamUrls: serverUrls, logPath: join(directory.logsPath, 'taps.log') });
      }
      report('starting', `starting the ${config.router} router`);
      router = await launchRouter(config, taps?.tapUrls ?? serverUrls, directory.path);
      if (config.flushCache) await Promise.all(serverUrls.map((url) => flushServerCache(url)));
    }
    throwIfInterrupted(options.signal);
    servers.forEach((server, node) => watch.watch(server.name, server.exited, node));
    watch.watch('taps', taps?.exited);
    watch.watch(router.handle.name, router.handle.exited);

    const actions = config.enableNodeFailures === false ? [] : failureActions(config);
    if (actions.length > 0) {
      failures = new FailureExecutor({
        actions,
        nodes: servers,
        routerWorkerUrls: taps?.tapUrls ?? servers.map((server) => server.url),
        router: router.control,
        clock,
        onCrash: (node) => watch.expect(servers[node]?.name ?? `node-${node}`),
        onRelaunch: (node, server) => watch.watch(server.name, server.exited, node),
      });
    }
    const metricsUrls = config.collectPerNodeMetrics ? servers.map((server) => `${server.url}/metrics`) : [];
    if (router.metricsUrl !== undefined && !attachedRouterOnly) metricsUrls.push(router.metricsUrl);
    const metrics = await collectServerMetrics(metricsUrls, clock, { directory: directory.path, onNotice: (notice) => log.notice(notice) });
    serverMetrics = metrics;
    // The trace is fetched as the run goes on, so a tracer that dies keeps what it traced before (trace-collector.ts).
    const traceUrl = taps !== undefined ? taps.tapUrls[0] : router.collectTrace !== undefined ? router.handle.url : undefined;
    trace = traceUrl === undefined ? undefined : collectTraceDuringRun(traceUrl);
    const load = await measureLoad({
      config,
      baseUrl: router.handle.url,
      workload,
      clock,
      runId: directory.runId,
      startedMs,
      signal,
      onProgress: options.onProgress,
      // The failure schedule counts from t0, the start of the measured load (after the warmup).
      onScheduleStart: (originMs) => {
        harness.start([
          ...(ownRouter && router !== undefined ? [{ name: router.handle.name, role: 'router' as const, url: router.handle.url }] : []),
          ...(config.target === 'sim' ? servers.map((server) => ({ name: server.name, role: 'sim-server' as const, url: server.url, node: server.url })) : []),
        ]);
        failures?.start(originMs);
      },
      ...(journal === undefined ? {} : { onStart: (t0: number) => journal.start(t0), onRecord: (record: RequestRecord) => journal.record(record) }),
    });
    if (failures !== undefined) {
      const executor = failures;
      await log.attempt('failures', 'the failure schedule did not finish', () => executor.stop(), undefined);
      servers = failures.nodes;
      for (const event of failures.events) log.event(event);
    }
    // servelab's taps do not report on themselves yet: named as not checked.
    const harnessMeasurements = await harness.finish(taps === undefined ? [] : ['taps']);
    // From here on, processes exit because the run is over.
    watch.stop();
    report('writing', `writing ${directory.path}`);
    await log.attempt('scraper', 'the scraped server metrics could not be written (server-metrics.csv)', () => metrics.finish(load.startTime), 0);
    // Where everything ran: kept beside the configuration, not in it, so a run's config.json can be run again.
    const extras: Record<string, unknown> = {
      cluster: { serverUrls: servers.map((server) => server.url), routerUrl: router.handle.url },
      harness: harnessMeasurements,
    };
    const notices = [...workload.notices, ...warmupNotices(load.warmupRecords)];
    if (notices.length > 0) extras.notices = notices;
    if (trace !== undefined) {
      const source = taps !== undefined ? 'taps' : 'router-trace';
      const tracer = taps !== undefined ? 'the tracing taps' : 'the builtin router';
      const collected = await trace.finish();
      const { matched } = joinTapRecords(load.records, collected.records);
      if (collected.failure !== undefined) {
        log.notice({
          source,
          message:
            collected.records.length === 0
              ? `${taps !== undefined ? "the tracing taps'" : "the builtin router's"} records could not be fetched, so router_send_time and host are empty (the client's own columns are complete): ${collected.failure}`
              : `${tracer} stopped answering (${collected.failure}): router_send_time and host are kept for the ${matched} requests traced before, empty for the rest`,
        });
      }
      if (taps !== undefined) extras.taps = { matchedRecords: matched, overhead: collected.overhead };
      else extras.routerTrace = { matchedRecords: matched };
    }
    // SGLang writes a request's log line after it answered: stop the servers first so that their last lines are on disk.
    await Promise.all(servers.map((server) => server.stop().catch(() => undefined)));
    const stopped = servers;
    const requestLogs = await log.attempt(
      'request-logs',
      "the servers' request logs could not be joined to the records",
      () =>
        joinRunRequestLogs({
          servers: stopped,
          attachedDirectory: config.serverRequestLogDir,
          records: load.records,
          warmupRecords: load.warmupRecords,
          runLogsPath: directory.logsPath,
        }),
      undefined,
    );
    if (requestLogs !== undefined) {
      extras.serverRequestLogs = requestLogs.join;
      if (requestLogs.notice !== undefined) extras.notices = [...((extras.notices as string[] | undefined) ?? []), requestLogs.notice];
    }
    return {
      runId: directory.runId,
      outputDirectory: directory.path,
      testLevel: 'routing',
      target: config.target,
      requestRate: targetRateOf(config),
      config: { ...config },
      load: stoppedEarly() ? { ...load, interrupted: true } : load,
      events: log.events,
      slo: config.slo,
      extras,
      notices: log.notices,
      ...(journal === undefined ? {} : { journal }),
    };
  } finally {
    harness.close();
    watch.stop();
    trace?.stop();
    await serverMetrics?.stop().catch(() => undefined);
    await failures?.stop().catch(() => undefined);
    if (failures !== undefined) servers = failures.nodes;
    await router?.handle.stop().catch(() => undefined);
    await taps?.stop().catch(() => undefined);
    await Promise.all(servers.map((server) => server.stop().catch(() => undefined)));
    if (journal !== undefined) await journal.close();
  }
}

/** Wraps a list of servers so an interrupted launch can stop all of them. */
async function stoppable(launch: Promise<ServerHandle[]>): Promise<{ servers: ServerHandle[]; stop(): Promise<void> }> {
  const servers = await launch;
  return { servers, stop: async () => void (await Promise.all(servers.map((server) => server.stop()))) };
}
