import { anchoredSystemClock, type Clock } from '../clock/clock.js';
import { withholdFromChildren } from '../cluster/process/child-env.js';
import type { NodeTestConfig, RoutingTestConfig } from '../config/schema.js';
import type { ServerHandle } from '../types/cluster.js';
import type { LoadResult } from '../types/load.js';
import type { RunJournal } from '../types/run-journal.js';
import type { TestLevel } from '../types/run.js';
import { buildWorkload, targetRateOf, type PlannedWorkload } from './build-workload.js';
import type { WatchedProcess } from './harness-watch.js';
import { HarnessWatch } from './harness-watch.js';
import { raceAbort } from './interruption.js';
import { launchCluster } from './launch-cluster.js';
import { choosePlacement, type ChosenPlacement } from './launcher-choice.js';
import { loadTargetLauncher } from './launch-targets/registry.js';
import { roundRobinNodes, type TargetLaunchContext, type TargetLauncher } from './launch-targets/target-launcher.js';
import type { MeasureLoadOptions } from './measure-load.js';
import type { MeasuredRun, RunOptions } from './measured-run.js';
import type { ProcessWatch } from './process-watch.js';
import { watchRunProcesses } from './process-watch.js';
import type { RunProgress } from './progress.js';
import { createRunDirectory, type RunDirectory } from './run-directory.js';
import { RunLog } from './run-log.js';
import { collectServerMetrics } from './server-metrics.js';
import { joinRunRequestLogs } from './server-request-logs.js';
import { scrapeBudgetForRate } from '../scrape/scrape-budget.js';

/** Reports a phase change with no request counts yet. */
export function phaseReporter(options: RunOptions, clock: Clock, startedMs: number, totalRequests: number) {
  return (phase: RunProgress['phase'], message?: string): void =>
    options.onProgress?.({ phase, message, totalRequests, sent: 0, inFlight: 0, completed: 0, failed: 0, elapsedMs: clock.nowMs() - startedMs });
}

type ScrapedMetrics = Awaited<ReturnType<typeof collectServerMetrics>>;

/**
 * What a node test and a routing test set up alike around their measurement, in one place: the clock, the target's
 * launcher and where its processes run, the checked workload, the run directory and journal, the log of events and
 * notices, the watch over launched processes, the harness watch, the launching of the servers, the scrape, the
 * request-log join, the result, and the teardown. Each test adds only what differs (a router, taps, failures).
 */
export class RunSetup<Config extends NodeTestConfig = NodeTestConfig> {
  readonly harness = new HarnessWatch();
  /** The scrape under way, stopped at close() when the run ends in an error before finishScrape. */
  #scraped: ScrapedMetrics | undefined;
  readonly context: TargetLaunchContext;
  /** Where the load-generator processes run, when the placement chose (`clientNodes` > 1 on Slurm). */
  readonly #clientNodes: readonly string[] | undefined;

  private constructor(
    readonly config: Config,
    readonly testLevel: TestLevel,
    readonly options: RunOptions,
    readonly clock: Clock,
    readonly startedMs: number,
    readonly launcher: TargetLauncher,
    readonly workload: PlannedWorkload,
    readonly directory: RunDirectory,
    readonly log: RunLog,
    readonly watch: ProcessWatch,
    /** The caller's signal joined with the process watch's (onProcessExit: stop). */
    readonly signal: AbortSignal,
    /** Whether the process watch ended the run early (rather than the caller). */
    readonly stoppedEarly: () => boolean,
    chosen: ChosenPlacement,
  ) {
    const groups = chosen.serverNodeGroups;
    this.#clientNodes = chosen.clientNodes !== undefined && chosen.clientNodes.length > 0 ? chosen.clientNodes : undefined;
    this.context = {
      placement: chosen.placement,
      logsPath: directory.logsPath,
      serverNode: roundRobinNodes(chosen.serverNodes),
      ...(groups === undefined ? {} : { serverNodeGroup: (index: number) => groups[index] }),
    };
  }

  /**
   * Checks everything that can be checked (the target, the dataset, the arrival trace, the engine profile) before
   * anything is launched, then creates the run directory and opens the journal.
   */
  static async open<Config extends NodeTestConfig>(config: Config, testLevel: TestLevel, options: RunOptions): Promise<RunSetup<Config>> {
    // Re-anchored at each run's start: a wall-clock step earlier in this process must not shift this run (see anchoredSystemClock).
    const clock = options.clock ?? anchoredSystemClock();
    const startedMs = clock.nowMs();
    const launcher = await loadTargetLauncher(config.target);
    const workload = await buildWorkload(config);
    // The API key is for the load generator only: no server, router or tap process gets the variable.
    withholdFromChildren(config.apiKeyEnv);
    await launcher.check?.(config);
    // Where the processes go, settled before anything is written: outside a Slurm allocation this is the error.
    const chosen = await choosePlacement(config, 'numGpus' in config && typeof config.numGpus === 'number' ? config.numGpus : 1, options);
    const directory = await createRunDirectory({ outputDir: config.outputDir, resultsRoot: config.resultsRoot, runId: config.runId, testLevel });
    await options.journal?.open({ outputDirectory: directory.path, runId: directory.runId, testLevel, target: config.target, requestRate: targetRateOf(config), config: { ...config } });
    const log = new RunLog(options.journal);
    const { watch, signal, stoppedEarly } = watchRunProcesses(clock, log, config.onProcessExit, options.signal);
    return new RunSetup(config, testLevel, options, clock, startedMs, launcher, workload, directory, log, watch, signal, stoppedEarly, chosen);
  }

  get journal(): RunJournal | undefined {
    return this.options.journal;
  }

  /** Reports a phase change on the run's progress listener. */
  report(phase: RunProgress['phase'], message?: string): void {
    phaseReporter(this.options, this.clock, this.startedMs, this.config.numPrompts)(phase, message);
  }

  /** Starts (or attaches to) a node test's server; an interrupt while it starts stops it. */
  launchNodeServer(this: RunSetup<NodeTestConfig>): Promise<ServerHandle> {
    this.report('starting', this.launcher.describeNodeStart(this.config));
    // A launcher that takes the signal (sim) kills its server at once; raceAbort covers one that does not.
    const context = { ...this.context, ...(this.options.signal === undefined ? {} : { signal: this.options.signal }) };
    return raceAbort(this.launcher.launchNode(this.config, context), this.options.signal, 'the server was starting');
  }

  /**
   * Starts (or attaches to) a routing test's servers, all or none; an interrupt while they start aborts the launches
   * still pending and stops those up, and the error comes once nothing is left running (launchCluster).
   */
  launchClusterServers(this: RunSetup<RoutingTestConfig>): Promise<ServerHandle[]> {
    this.report('starting', this.launcher.describeClusterStart(this.config));
    const context = { ...this.context, ...(this.options.signal === undefined ? {} : { signal: this.options.signal }) };
    return launchCluster(this.launcher, this.config, context);
  }

  /** The servers that answer the harness endpoint about their own health (launched simulated servers). */
  harnessServers(servers: readonly ServerHandle[]): WatchedProcess[] {
    if (!this.launcher.serversReportOnThemselves) return [];
    return servers.map((server) => ({ name: server.name, role: 'sim-server' as const, url: server.url, node: server.url }));
  }

  /** Starts scraping these `/metrics` URLs on the run's clock. */
  async scrape(metricsUrls: string[]): Promise<ScrapedMetrics> {
    // Samples go to the run directory as they come (server-metrics.partial.csv): a scraper that dies keeps what it
    // scraped, and says so in a notice.
    const budget = scrapeBudgetForRate(this.config.serverMetricsMbPerHour);
    this.#scraped = await collectServerMetrics(metricsUrls, this.clock, { directory: this.directory.path, budget, onNotice: (notice) => this.log.notice(notice) });
    return this.#scraped;
  }

  /** Writes what was scraped (server-metrics.csv); a failure becomes a notice, never the run's end. */
  async finishScrape(scraped: ScrapedMetrics, load: LoadResult): Promise<void> {
    await this.log.attempt('scraper', 'the scraped server metrics could not be written (server-metrics.csv)', () => scraped.finish(load.startTime), 0);
  }

  /**
   * Joins the servers' request logs to the records (call after the servers stopped: SGLang writes a request's line
   * after it answered). `whose` names them in the notice when the join fails.
   */
  joinRequestLogs(servers: readonly ServerHandle[], load: LoadResult, whose: string, pdNumPrefill?: number) {
    return this.log.attempt(
      'request-logs',
      `${whose} could not be joined to the records`,
      () =>
        joinRunRequestLogs({
          servers,
          attachedDirectory: this.config.serverRequestLogDir,
          records: load.records,
          warmupRecords: load.warmupRecords,
          runLogsPath: this.directory.logsPath,
          ...(pdNumPrefill === undefined ? {} : { pdNumPrefill }),
        }),
      undefined,
    );
  }

  /**
   * Where load-generator processes run (`clientNodes` > 1): the run's placement and client nodes, their logs in the
   * run's logs/, and a generator that dies mid-run as an event and a notice, as any launched process's death is.
   */
  generatorSettings(): NonNullable<MeasureLoadOptions['generators']> {
    return {
      placement: this.context.placement,
      ...(this.#clientNodes === undefined ? {} : { nodes: this.#clientNodes }),
      logsPath: this.directory.logsPath,
      onLost: (loss) => {
        this.log.event({ time: loss.time, kind: 'process_exit', detail: loss.detail });
        this.log.notice({ source: `process:${loss.generator}`, time: loss.time, message: loss.detail });
      },
    };
  }

  /** Everything the run measured, for analysis and reporters. */
  measured(load: LoadResult, extras: Record<string, unknown>): MeasuredRun {
    // Each load generator's clock against this host's and what it delivered, beside the servers' clocks.
    if (load.loadGenerators !== undefined) extras = { ...extras, loadGenerators: load.loadGenerators };
    return {
      runId: this.directory.runId,
      outputDirectory: this.directory.path,
      testLevel: this.testLevel,
      target: this.config.target,
      requestRate: targetRateOf(this.config),
      config: { ...this.config },
      load,
      events: this.log.events,
      slo: this.config.slo,
      extras,
      notices: this.log.notices,
      ...(this.journal === undefined ? {} : { journal: this.journal }),
    };
  }

  /**
   * The teardown, whatever happened: the harness and process watches end (what exits from now on is the teardown),
   * `stopLaunched` stops what the test launched, and the journal closes.
   */
  async close(stopLaunched: () => Promise<void>): Promise<void> {
    this.harness.close();
    this.watch.stop();
    await this.#scraped?.stop().catch(() => undefined);
    await stopLaunched();
    if (this.journal !== undefined) await this.journal.close();
  }
}
