import { warmupNotices } from './warmup-notices.js';
import { simSchedulingNotices } from './scheduling-notices.js';
import type { NodeTestConfig } from '../config/schema.js';
import type { ServerHandle } from '../types/cluster.js';
import type { RequestRecord } from '../types/record.js';
import { flushServerCache } from './flush-cache.js';
import { throwIfInterrupted } from './interruption.js';
import { measureLoad } from './measure-load.js';
import { RunSetup } from './measure-setup.js';
import type { MeasuredRun, RunOptions } from './measured-run.js';

export { phaseReporter } from './measure-setup.js';

/**
 * A node test's measurement: one server, requests sent straight to it (README.md). Launches the target, offers the load,
 * records every request's lifecycle, and stops the server; analysis and files come after.
 */
export async function measureNodeTest(config: NodeTestConfig, options: RunOptions = {}): Promise<MeasuredRun> {
  const run = await RunSetup.open(config, 'node', options);
  const { directory, journal } = run;
  let server: ServerHandle | undefined;
  try {
    throwIfInterrupted(options.signal);
    server = await run.launchNodeServer();
    if (config.flushCache) await flushServerCache(server.url);
    throwIfInterrupted(options.signal);
    const target = server;
    run.watch.watch('server', target.exited, 0, target.node);
    const serverMetrics = await run.scrape([`${target.url}/metrics`]);
    // In a node test the client talks to the server directly: the "router send" is the arrival itself.
    const completeRecord = (record: RequestRecord): RequestRecord => {
      record.routerSendTime ??= record.arrivalTime;
      record.host ??= target.url;
      if (target.node !== undefined) record.hostNode ??= target.node;
      return record;
    };
    const load = await measureLoad({
      config,
      baseUrl: target.url,
      workload: run.workload,
      clock: run.clock,
      runId: directory.runId,
      startedMs: run.startedMs,
      signal: run.signal,
      generators: run.generatorSettings(),
      onProgress: options.onProgress,
      onScheduleStart: () => run.harness.start(run.harnessServers([target])),
      ...(journal === undefined ? {} : { onStart: (t0: number) => journal.start(t0), onRecord: (record: RequestRecord) => journal.record(completeRecord(record)) }),
    });
    const harnessMeasurements = await run.harness.finish([]);
    for (const record of load.records) completeRecord(record);
    run.watch.stop();
    run.report('writing', `writing ${directory.path}`);
    await run.finishScrape(serverMetrics, load);
    // SGLang writes a request's log line after it answered: stop the server first so that its last lines are on disk.
    await server.stop();
    const requestLogs = await run.joinRequestLogs([target], load, "the server's request log");
    const notices = [
      ...run.workload.notices,
      ...warmupNotices(load.warmupRecords),
      ...(requestLogs?.notice === undefined ? [] : [requestLogs.notice]),
      ...simSchedulingNotices(config),
    ];
    const extras: Record<string, unknown> = { harness: harnessMeasurements };
    if (notices.length > 0) extras.notices = notices;
    if (requestLogs !== undefined) extras.serverRequestLogs = requestLogs.join;
    return run.measured(load, extras);
  } finally {
    await run.close(async () => {
      await server?.stop().catch(() => undefined);
    });
  }
}
