import { systemClock } from '../clock/clock.js';
import type { NodeTestConfig, RoutingTestConfig } from '../config/schema.js';
import type { MeasuredRun, RunOptions } from '../orchestration/measured-run.js';
import { measureVirtualTest } from '../orchestration/virtual-time/measure-virtual-test.js';
import { RequestsJournal } from '../report/jsonl/requests-journal.js';
import type { RunData, TestLevel } from '../types/run.js';
import type { SloTargets } from '../types/summary.js';
import { analyzeResults, visualizeResults, type RunSource } from './analyze-results.js';
import { finishRun } from './finish-run.js';
import { ServelabError } from '../errors/servelab-error.js';
import { runRepeats, type RepeatsOptions, type RepeatsResult } from './repeats/run-repeats.js';
import { runTestAsJob } from './run-test-as-job.js';
import { submitsAsJob } from '../cluster/slurm-jobs/slurm-allocation.js';
import type { ResultMetrics } from './first-users-names.js';
import type { TestResult } from './test-result.js';

/**
 * What a node test and a routing test share as library objects: a validated configuration, `run()` (measured on real
 * processes, or simulated in virtual time, then analyzed and written), and re-analysis of a run.
 */
export abstract class MeasuredTest<Config extends NodeTestConfig | RoutingTestConfig> {
  readonly config: Config;

  protected constructor(
    config: Config,
    private readonly testLevel: TestLevel,
    private readonly measure: (config: Config, options: RunOptions) => Promise<MeasuredRun>,
    /** The settings as given (no defaults filled in): what a submitted job's run validates again. */
    private readonly given: Record<string, unknown> = {},
  ) {
    this.config = config;
  }

  /** One run. With `repeats` above 1 in the configuration, call runRepeats() instead (a series is not one result). */
  async run(options: RunOptions = {}): Promise<TestResult> {
    // `launcher: slurm` outside an allocation: the run is one batch job, its coordinator on the allocation's first node.
    if (submitsAsJob(this.config)) {
      if (this.config.repeats > 1) {
        throw new ServelabError('INVALID_CONFIG', `repeats is ${this.config.repeats} with launcher slurm outside an allocation: a submitted job makes one run so far; run the repeats inside an allocation (salloc), or submit with repeats 1`);
      }
      return runTestAsJob(this.testLevel, this.given, options.signal);
    }
    if (this.config.repeats > 1) {
      throw new ServelabError('INVALID_CONFIG', `repeats is ${this.config.repeats}: run() makes one run; call runRepeats() for the series and its intervals, or set repeats to 1`);
    }
    return this.runOnce(this.config, options);
  }

  /**
   * The test `repeats` times (repeat k with seed + k − 1, each in `repeat-k/` of the run directory), and every headline
   * metric as an estimate with a 95% interval over them (docs/statistics.md). With `repeats` 1: one repeat.
   */
  runRepeats(options: RepeatsOptions = {}): Promise<RepeatsResult> {
    if (submitsAsJob(this.config)) {
      return Promise.reject(new ServelabError('INVALID_CONFIG', 'repeats with launcher slurm outside an allocation: a submitted job makes one run so far; run the repeats inside an allocation (salloc)'));
    }
    return runRepeats(this.config, this.testLevel, (config, runOptions) => this.runOnce(config, runOptions), options);
  }

  private async runOnce(config: Config, options: RunOptions): Promise<TestResult> {
    const measured = config.virtualTime
      ? await measureVirtualTest(config, this.testLevel, options.clock ?? systemClock, options.onProgress)
      : await this.measure(config, { ...options, journal: options.journal ?? new RequestsJournal() });
    return finishRun(measured);
  }

  /** Analyzes a run again (the result `run()` returned, or a run directory): servelab's metrics and the first users' names. */
  analyzeResults(source: RunSource, options: { slo?: SloTargets } = {}): Promise<{ run: RunData; metrics: ResultMetrics }> {
    return analyzeResults(source, options);
  }

  /** Rewrites a run's report, charts and tables from its records (the result `run()` returned, or a run directory). */
  visualizeResults(source: RunSource, options: { slo?: SloTargets } = {}): Promise<string[]> {
    return visualizeResults(source, options);
  }
}
