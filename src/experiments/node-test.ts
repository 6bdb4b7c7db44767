import { resolveNodeTestConfig } from '../config/node-test-config.js';
import type { NodeTestConfig, NodeTestConfigInput } from '../config/schema.js';
import { systemClock } from '../clock/clock.js';
import { measureNodeTest } from '../orchestration/measure-node-test.js';
import type { RunOptions } from '../orchestration/measured-run.js';
import { measureVirtualTest } from '../orchestration/virtual-time/measure-virtual-test.js';
import { RequestsJournal } from '../report/jsonl/requests-journal.js';
import { finishRun } from './finish-run.js';
import { analyzeResults, visualizeResults, type RunSource } from './analyze-results.js';
import type { ResultMetrics } from './first-users-names.js';
import type { RunData } from '../types/run.js';
import type { SloTargets } from '../types/summary.js';
import type { TestResult } from './test-result.js';

/**
 * A node test: one server, requests sent straight to it (SPEC §1). `run()` launches the target (or simulates it in
 * virtual time), offers the load, records every request's lifecycle, and writes the run directory.
 */
export class NodeTest {
  readonly config: NodeTestConfig;

  /** Validates the configuration at once: a bad setting throws INVALID_CONFIG naming it, before anything starts. */
  constructor(config: NodeTestConfigInput | Record<string, unknown> = {}) {
    this.config = resolveNodeTestConfig(config);
  }

  async run(options: RunOptions = {}): Promise<TestResult> {
    const measured = this.config.virtualTime
      ? await measureVirtualTest(this.config, 'node', options.clock ?? systemClock, options.onProgress)
      : await measureNodeTest(this.config, { ...options, journal: options.journal ?? new RequestsJournal() });
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
