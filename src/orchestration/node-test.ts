import type { NodeTestConfig, NodeTestConfigInput } from '../config/schema.js';
import { resolveNodeTestConfig } from '../config/node-test-config.js';
import { systemClock, type Clock } from '../clock/clock.js';
import type { ServerHandle } from '../types/cluster.js';
import { buildWorkload } from './build-workload.js';
import { finishRun } from './finish-run.js';
import { flushServerCache } from './flush-cache.js';
import { raceAbort, throwIfInterrupted } from './interruption.js';
import { launchNodeTarget } from './launch-node-target.js';
import { measureLoad } from './measure-load.js';
import type { ProgressListener, RunProgress } from './progress.js';
import { createRunDirectory } from './run-directory.js';
import { runVirtualTest } from './virtual-time/run-virtual-test.js';
import { collectServerMetrics } from './server-metrics.js';
import type { TestResult } from './test-result.js';

export interface RunOptions {
  /** Aborting interrupts the run: sending stops, in-flight requests end as `aborted`, and what was measured is written. */
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  /** The clock for every client-side reading; the real one unless a test injects another. */
  clock?: Clock;
}

/** Reports a phase change with no request counts yet. */
export function phaseReporter(options: RunOptions, clock: Clock, startedMs: number, totalRequests: number) {
  return (phase: RunProgress['phase'], message?: string): void =>
    options.onProgress?.({ phase, message, totalRequests, sent: 0, inFlight: 0, completed: 0, failed: 0, elapsedMs: clock.nowMs() - startedMs });
}

/**
 * A node test: one server, requests sent straight to it (SPEC §1). Launches the target, offers the load, records every
 * request's lifecycle, and writes the run directory.
 */
export class NodeTest {
  readonly config: NodeTestConfig;

  constructor(config: NodeTestConfigInput | Record<string, unknown> = {}) {
    this.config = resolveNodeTestConfig(config);
  }

  async run(options: RunOptions = {}): Promise<TestResult> {
    const config = this.config;
    const clock = options.clock ?? systemClock;
    const startedMs = clock.nowMs();
    const report = phaseReporter(options, clock, startedMs, config.numPrompts);
    if (config.virtualTime) return runVirtualTest(config, 'node', clock, options.onProgress);

    // Everything that can be checked (the dataset, the arrival trace) is checked before anything is launched.
    const workload = await buildWorkload(config);
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
      const result = await finishRun({
        runId: directory.runId,
        testLevel: 'node',
        target: config.target,
        requestRate: config.requestRate,
        config: { ...config },
        load,
        events: [],
        outputDirectory: directory.path,
        slo: config.slo,
      });
      return result;
    } finally {
      await server?.stop().catch(() => undefined);
    }
  }
}
