import type { NodeTestConfig } from '../config/schema.js';
import { systemClock, type Clock } from '../clock/clock.js';
import type { ServerHandle } from '../types/cluster.js';
import { buildWorkload, targetRateOf } from './build-workload.js';
import { checkSimSettings } from './check-sim-settings.js';
import { flushServerCache } from './flush-cache.js';
import { raceAbort, throwIfInterrupted } from './interruption.js';
import { launchNodeTarget } from './launch-node-target.js';
import { measureLoad } from './measure-load.js';
import type { MeasuredRun, RunOptions } from './measured-run.js';
import type { RunProgress } from './progress.js';
import { createRunDirectory } from './run-directory.js';
import { collectServerMetrics } from './server-metrics.js';

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
  const clock = options.clock ?? systemClock;
  const startedMs = clock.nowMs();
  const report = phaseReporter(options, clock, startedMs, config.numPrompts);
  // Everything that can be checked (the dataset, the arrival trace, the engine profile) is checked before anything is
  // launched.
  const workload = await buildWorkload(config);
  await checkSimSettings(config);
  const directory = await createRunDirectory({ outputDir: config.outputDir, resultsRoot: config.resultsRoot, runId: config.runId, testLevel: 'node' });

  let server: ServerHandle | undefined;
  try {
    throwIfInterrupted(options.signal);
    report('starting', config.target === 'attach' ? `attaching to ${config.url}` : `launching the ${config.target} server`);
    server = await raceAbort(launchNodeTarget(config, directory.logsPath), options.signal, 'the server was starting');
    if (config.flushCache) await flushServerCache(server.url);
    throwIfInterrupted(options.signal);
    const serverMetrics = collectServerMetrics([`${server.url}/metrics`], clock);
    const load = await measureLoad({ config, baseUrl: server.url, workload, clock, runId: directory.runId, startedMs, signal: options.signal, onProgress: options.onProgress });
    // In a node test the client talks to the server directly: the "router send" is the arrival itself.
    for (const record of load.records) {
      record.routerSendTime ??= record.arrivalTime;
      record.host ??= server.url;
    }
    report('writing', `writing ${directory.path}`);
    await serverMetrics.finish(load.startTime, directory.path);
    return {
      runId: directory.runId,
      outputDirectory: directory.path,
      testLevel: 'node',
      target: config.target,
      requestRate: targetRateOf(config),
      config: { ...config },
      load,
      events: [],
      slo: config.slo,
      ...(workload.notices.length > 0 ? { extras: { notices: workload.notices } } : {}),
    };
  } finally {
    await server?.stop().catch(() => undefined);
  }
}
