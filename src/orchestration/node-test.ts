import type { NodeTestConfig, NodeTestConfigInput } from '../config/schema.js';
import { resolveNodeTestConfig } from '../config/node-test-config.js';
import { systemClock, type Clock } from '../clock/clock.js';
import { ServelabError } from '../errors/servelab-error.js';
import { createProtocolClient } from '../clients/registry.js';
import { runLoad } from '../load/run-load.js';
import { summarize } from '../analysis/summarize.js';
import { writeRunFiles } from '../report/write-run-files.js';
import type { ServerHandle } from '../types/cluster.js';
import type { ProtocolClient } from '../types/client.js';
import type { RunData } from '../types/run.js';
import { servelabVersion } from '../utils/version.js';
import { buildWorkload } from './build-workload.js';
import { launchNodeTarget } from './launch-node-target.js';
import { flushServerCache } from './flush-cache.js';
import type { ProgressListener } from './progress.js';
import { createRunDirectory } from './run-directory.js';
import { toTestResult, type TestResult } from './test-result.js';

export interface RunOptions {
  /** Aborting interrupts the run: sending stops, in-flight requests end as `aborted`, and what was measured is written. */
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  /** The clock for every client-side reading; the real one unless a test injects another. */
  clock?: Clock;
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
    const signal = options.signal;
    const startedMs = clock.nowMs();
    const report = (phase: Parameters<ProgressListener>[0]['phase'], message?: string): void =>
      options.onProgress?.({ phase, message, totalRequests: config.numPrompts, sent: 0, inFlight: 0, completed: 0, failed: 0, elapsedMs: clock.nowMs() - startedMs });

    // Everything that can be checked is checked before anything is launched.
    const workload = await buildWorkload(config);
    const directory = await createRunDirectory({ outputDir: config.outputDir, resultsRoot: config.resultsRoot, runId: config.runId, testLevel: 'node' });

    let server: ServerHandle | undefined;
    let client: ProtocolClient | undefined;
    try {
      throwIfInterrupted(signal);
      report('starting', config.target === 'attach' ? `attaching to ${config.url}` : `launching ${config.target} server`);
      server = await raceAbort(launchNodeTarget(config, directory.logsPath), signal);
      if (config.flushCache) await flushServerCache(server.url);
      client = createProtocolClient(config.protocol, {
        baseUrl: server.url,
        stream: config.stream,
        sampling: { temperature: config.temperature, ignoreEos: config.ignoreEos },
        model: config.model ?? config.modelPath,
        apiKey: process.env[config.apiKeyEnv],
        timeouts: {
          connectMs: config.connectTimeoutMs,
          firstByteMs: config.firstByteTimeoutMs,
          idleMs: config.idleTimeoutMs,
          totalMs: config.totalTimeoutMs,
        },
        maxConnections: config.maxConcurrency,
        clock,
      });
      throwIfInterrupted(signal);
      const load = await runLoad({
        requests: workload.requests,
        warmupRequests: workload.warmupRequests,
        arrivalOffsetsMs: workload.arrivalOffsetsMs,
        maxConcurrency: config.maxConcurrency,
        client,
        clock,
        signal,
        requestIdPrefix: `${directory.runId}-`,
        onProgress: (progress) =>
          options.onProgress?.({
            phase: progress.phase === 'measured' ? 'running' : progress.phase,
            totalRequests: progress.total,
            sent: progress.sent,
            inFlight: progress.inFlight,
            completed: progress.completed,
            failed: progress.failed,
            elapsedMs: clock.nowMs() - startedMs,
          }),
      });
      const serverUrl = server.url;
      // In a node test the client talks to the server directly: the "router send" is the arrival itself.
      for (const record of load.records) {
        record.routerSendTime ??= record.arrivalTime;
        record.host ??= serverUrl;
      }
      const run: RunData = {
        info: {
          runId: directory.runId,
          testLevel: 'node',
          target: config.target,
          status: load.interrupted ? 'interrupted' : 'completed',
          startTime: load.startTime,
          endTime: load.endTime,
          requestRate: config.requestRate,
          simulated: false,
          servelabVersion,
        },
        config: { test: 'node', ...config },
        records: load.records,
        events: [],
      };
      report('writing', `writing ${directory.path}`);
      const summary = summarize(run, { slo: config.slo });
      const files = await writeRunFiles(run, summary, directory.path);
      report('done');
      return toTestResult(run, summary, directory.path, files);
    } finally {
      await client?.close().catch(() => undefined);
      await server?.stop().catch(() => undefined);
    }
  }
}

function throwIfInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new ServelabError('INTERRUPTED', 'interrupted before any request was sent; nothing was measured');
}

/** Rejects as soon as the run is interrupted, while still letting `work` finish (its result is then cleaned up). */
async function raceAbort<T extends { stop(): Promise<void> }>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      reject(new ServelabError('INTERRUPTED', 'interrupted while the server was starting; nothing was measured'));
      void work.then((started) => started.stop()).catch(() => undefined);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
