import { warmupNotices } from './warmup-notices.js';
import { simSchedulingNotices } from './scheduling-notices.js';
import { join } from 'node:path';
import { failureActions } from '../config/routing-test-config.js';
import type { RoutingTestConfig } from '../config/schema.js';
import { FailureExecutor } from '../cluster/failures/failure-executor.js';
import { attachServer } from '../cluster/launchers/attach/attach-server.js';
import { launchTaps, type LaunchedTaps } from '../cluster/launchers/taps/launch-taps.js';
import type { ServerHandle } from '../types/cluster.js';
import type { RequestRecord } from '../types/record.js';
import { flushServerCache } from './flush-cache.js';
import { nameHostNodes } from './host-nodes.js';
import { throwIfInterrupted } from './interruption.js';
import { joinTapRecords } from './join-tap-records.js';
import { launchRouter, routerTracesItself, type LaunchedRouter } from './launch-router.js';
import { measureLoad } from './measure-load.js';
import { isPrefillIndex } from './pd-servers.js';
import { RunSetup } from './measure-setup.js';
import { collectTraceDuringRun, type TraceCollector } from './trace-collector.js';
import type { MeasuredRun, RunOptions } from './measured-run.js';

/**
 * A routing test's measurement: one router in front of N servers (README.md). The client sends to the router at the
 * total arrival rate; a tracing tap in front of each server records when the router forwarded each request and where.
 * Everything launched is stopped before this returns.
 */
export async function measureRoutingTest(config: RoutingTestConfig, options: RunOptions = {}): Promise<MeasuredRun> {
  const run = await RunSetup.open(config, 'routing', options);
  const { directory, journal, log, watch, clock } = run;
  const attachedRouterUrl = run.launcher.attachedRouterUrl?.(config);
  const attachedRouterOnly = attachedRouterUrl !== undefined;

  let servers: ServerHandle[] = [];
  let taps: LaunchedTaps | undefined;
  let trace: TraceCollector | undefined;
  let router: LaunchedRouter | undefined;
  let failures: FailureExecutor | undefined;
  // servelab's own builtin router reports on itself; a router servelab does not own (smg, sglang-router) does not.
  const ownRouter = !attachedRouterOnly && config.router === 'builtin';
  try {
    throwIfInterrupted(options.signal);
    if (attachedRouterOnly) {
      run.report('starting', `attaching to the router at ${attachedRouterUrl}`);
      router = { handle: await attachServer(attachedRouterUrl, 'router') };
    } else {
      servers = await run.launchClusterServers();
      const serverUrls = servers.map((server) => server.url);
      // A router servelab owns traces itself; taps stand in front of the servers only for routers it does not own.
      if (config.taps && !routerTracesItself(config)) {
        run.report('starting', 'starting the tracing taps');
        taps = await launchTaps({ upstreamUrls: serverUrls, logPath: join(directory.logsPath, 'taps.log'), placement: run.context.placement });
      }
      run.report('starting', `starting the ${config.router} router`);
      router = await launchRouter(config, taps?.tapUrls ?? serverUrls, directory.path, run.context.placement, serverUrls);
      if (config.flushCache) await Promise.all(serverUrls.map((url) => flushServerCache(url)));
    }
    throwIfInterrupted(options.signal);
    servers.forEach((server, node) => watch.watch(server.name, server.exited, node, server.node));
    watch.watch('taps', taps?.exited);
    watch.watch(router.handle.name, router.handle.exited);

    const actions = config.enableNodeFailures === false ? [] : failureActions(config);
    if (actions.length > 0) {
      failures = new FailureExecutor({
        actions,
        nodes: servers,
        routerWorkerUrls: taps?.tapUrls ?? servers.map((server) => server.url),
        router: router.control,
        ...(config.pdDisaggregation === true ? { roles: servers.map((_, node) => (isPrefillIndex(config, node) ? ('prefill' as const) : ('decode' as const))) } : {}),
        clock,
        onCrash: (node) => watch.expect(servers[node]?.name ?? `node-${node}`),
        onRelaunch: (node, server) => watch.watch(server.name, server.exited, node, server.node),
      });
    }
    const metricsUrls = config.collectPerNodeMetrics ? servers.map((server) => `${server.url}/metrics`) : [];
    if (router.metricsUrl !== undefined && !attachedRouterOnly) metricsUrls.push(router.metricsUrl);
    const serverMetrics = await run.scrape(metricsUrls);
    // The trace is fetched as the run goes on, so a tracer that dies keeps what it traced before (trace-collector.ts).
    const traceUrl = taps !== undefined ? taps.tapUrls[0] : router.traceUrl;
    trace = traceUrl === undefined ? undefined : collectTraceDuringRun(traceUrl);
    const load = await measureLoad({
      config,
      baseUrl: router.handle.url,
      workload: run.workload,
      clock,
      runId: directory.runId,
      startedMs: run.startedMs,
      signal: run.signal,
      generators: run.generatorSettings(),
      onProgress: options.onProgress,
      // The failure schedule counts from t0, the start of the measured load (after the warmup).
      onScheduleStart: (originMs) => {
        run.harness.start([
          ...(ownRouter && router !== undefined ? [{ name: router.handle.name, role: 'router' as const, url: router.handle.url }] : []),
          ...run.harnessServers(servers),
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
    const harnessMeasurements = await run.harness.finish(taps === undefined ? [] : ['taps']);
    // From here on, processes exit because the run is over.
    watch.stop();
    run.report('writing', `writing ${directory.path}`);
    await run.finishScrape(serverMetrics, load);
    // Where everything ran: kept beside the configuration, not in it, so a run's config.json can be run again.
    const extras: Record<string, unknown> = {
      cluster: { serverUrls: servers.map((server) => server.url), routerUrl: router.handle.url, ...serverNodesExtra(servers) },
      harness: harnessMeasurements,
    };
    const notices = [...run.workload.notices, ...warmupNotices(load.warmupRecords), ...simSchedulingNotices(config)];
    // Said in the run itself, not only in the docs: what a PD run on the sim still does not model.
    if (config.pdDisaggregation === true && config.target === 'sim') notices.push(pdSimNotice(config.protocol));
    if (notices.length > 0) extras.notices = notices;
    if (trace !== undefined) {
      const source = taps !== undefined ? 'taps' : 'router-trace';
      const tracer = taps !== undefined ? 'the tracing taps' : 'the builtin router';
      const collected = await trace.finish();
      const { matched } = joinTapRecords(load.records, collected.records, config.pdDisaggregation === true && taps !== undefined ? { numPrefill: config.numPrefill ?? 1 } : undefined);
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
    const requestLogs = await run.joinRequestLogs(servers, load, "the servers' request logs", config.pdDisaggregation === true ? (config.numPrefill ?? 1) : undefined);
    if (requestLogs !== undefined) {
      extras.serverRequestLogs = requestLogs.join;
      if (requestLogs.notice !== undefined) extras.notices = [...((extras.notices as string[] | undefined) ?? []), requestLogs.notice];
    }
    nameHostNodes(load.records, servers);
    return run.measured(run.stoppedEarly() ? { ...load, interrupted: true } : load, extras);
  } finally {
    trace?.stop();
    await run.close(async () => {
      await failures?.stop().catch(() => undefined);
      if (failures !== undefined) servers = failures.nodes;
      await router?.handle.stop().catch(() => undefined);
      await taps?.stop().catch(() => undefined);
      await Promise.all(servers.map((server) => server.stop().catch(() => undefined)));
    });
  }
}

/**
 * What a prefill/decode run on the simulated engine still does not model (docs/simulated-engine.md, "Prefill/decode
 * roles"): the queues of both servers, the KV transfer over a shared link and the phase columns are modelled; the
 * prefill server's KV held while it is sent, data-parallel attention ranks and transfer failures other than an
 * unreachable peer and SGLang's bootstrap and KV waiting timeouts (pd-timeouts.ts) are not. The phase columns come from the decode server's /generate answer, so other
 * protocols leave them empty.
 */
export function pdSimNotice(protocol: string): string {
  const columns =
    protocol === 'sglang'
      ? 'the phase columns (prefill_queue_time ... kv_transfer_wait_time) are the sim\'s own model times'
      : `the phase columns (prefill_queue_time ... kv_transfer_wait_time) are empty: the simulated decode server reports them on /generate answers (--protocol sglang), not on ${protocol}`;
  return `prefill/decode on the simulated engine: both servers' queues and the KV transfer over a shared link are modelled and ${columns}; not modelled: the prefill server's KV held during its transfer, data-parallel attention ranks, transfer failures other than an unreachable peer and SGLang's 300 s bootstrap and KV waiting timeouts`;
}

/**
 * The node each server ran on by name (a Slurm node), beside `serverUrls` in `extras.cluster`: the per-node tables name
 * it beside the URL. Nothing when the servers ran on this host.
 */
function serverNodesExtra(servers: readonly ServerHandle[]): { serverNodes?: (string | null)[] } {
  if (servers.every((server) => server.node === undefined)) return {};
  return { serverNodes: servers.map((server) => server.node ?? null) };
}
