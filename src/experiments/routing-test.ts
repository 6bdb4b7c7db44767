import { resolveRoutingTestConfig } from '../config/routing-test-config.js';
import type { RoutingTestConfig, RoutingTestConfigInput } from '../config/schema.js';
import { systemClock } from '../clock/clock.js';
import { measureRoutingTest } from '../orchestration/measure-routing-test.js';
import type { RunOptions } from '../orchestration/measured-run.js';
import { measureVirtualTest } from '../orchestration/virtual-time/measure-virtual-test.js';
import { RequestsJournal } from '../report/jsonl/requests-journal.js';
import { checkRoutingPolicyName } from '../routing/policies/registry.js';
import { finishRun } from './finish-run.js';
import { analyzeResults, visualizeResults, type RunSource } from './analyze-results.js';
import type { ResultMetrics } from './first-users-names.js';
import type { RunData } from '../types/run.js';
import type { SloTargets } from '../types/summary.js';
import type { TestResult } from './test-result.js';

/**
 * A routing test: one router in front of N servers (SPEC §1). `run()` launches the servers, the tracing taps and the
 * router (or simulates them in virtual time), offers the load at the total rate, and writes the run directory.
 */
export class RoutingTest {
  readonly config: RoutingTestConfig;

  /** Validates the configuration at once: a bad setting throws INVALID_CONFIG naming it, before anything starts. */
  constructor(config: RoutingTestConfigInput | Record<string, unknown> = {}) {
    this.config = resolveRoutingTestConfig(config);
    // The builtin router's policy is checked here, before anything starts (the config layer cannot see the registry).
    if (this.config.router === 'builtin') checkRoutingPolicyName(this.config.routingPolicy);
  }

  async run(options: RunOptions = {}): Promise<TestResult> {
    const measured = this.config.virtualTime
      ? await measureVirtualTest(this.config, 'routing', options.clock ?? systemClock, options.onProgress)
      : await measureRoutingTest(this.config, { ...options, journal: options.journal ?? new RequestsJournal() });
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
