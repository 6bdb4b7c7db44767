/**
 * servelab as a library: the same tests as the command line, configured with the same names (README.md).
 *
 *   import { NodeTest } from 'servelab';
 *   const result = await new NodeTest({ requestRate: 20, numPrompts: 200 }).run();
 *   console.log(result.metrics.latencies.ttft?.p99, result.exportedFiles.csv); // seconds
 *   console.log(result.metrics.p99_ttft, result.success_rate); // the first users' names, milliseconds
 */
export { NodeTest } from './experiments/node-test.js';
export type { RunOptions } from './orchestration/measured-run.js';
export { RoutingTest } from './experiments/routing-test.js';
export { analyzeResults, visualizeResults, type RunSource } from './experiments/analyze-results.js';
export type { FirstUsersMetrics, ResultMetrics } from './experiments/first-users-names.js';
export { runSweep, type SweepResult } from './experiments/sweep/run-sweep.js';
export { parseSweepPlan, type SweepPlan } from './experiments/sweep/sweep-plan.js';
export type { TestResult, ExportedFiles } from './experiments/test-result.js';
export type { RepeatsOptions, RepeatsResult } from './experiments/repeats/run-repeats.js';
export type { RepeatsFile } from './report/repeats/repeats-file.js';
export type { CombinedMetric } from './analysis/bootstrap/combine-repeats.js';
export type { IntervalEstimate, RunPrecision } from './types/summary.js';
export { slurmBatchScript } from './experiments/run-test-as-job.js';
export type { RunProgress, ProgressListener } from './orchestration/progress.js';
export type { NodeTestConfig, NodeTestConfigInput, RoutingTestConfig, RoutingTestConfigInput } from './config/schema.js';
export { ServelabError, isServelabError, type ErrorCode } from './errors/servelab-error.js';
export { systemClock, ManualClock, type Clock } from './clock/clock.js';
export { summarize } from './analysis/summarize.js';
export { deriveColumns } from './analysis/derive.js';
export type { RequestRecord, ClientOutcome, ErrorClass } from './types/record.js';
export type { RunData, RunInfo, RunEvent, RunStatus } from './types/run.js';
export type { Summary } from './types/summary.js';
export type { WorkloadRequest } from './types/workload.js';
export type { ProtocolClient, ProtocolClientOptions } from './types/client.js';
// Where processes run and what a target launches (docs/placement.md): for a target given as a module path.
export type { PlacedProcess, PlacementRequest, ProcessExit, ProcessPlacement, ServerHandle } from './types/cluster.js';
export { localPlacement } from './cluster/placement/local/local-placement.js';
// Job steps of the Slurm allocation servelab runs in (docs/slurm.md): run({ placement, serverNodes }) or launcher: 'slurm'.
export { openSlurmPlacement, SlurmPlacement } from './cluster/placement/slurm/slurm-placement.js';
export { insideSlurmAllocation } from './cluster/placement/slurm/slurm-allocation.js';
export { listeningUrl } from './cluster/placement/listening-url.js';
export type { TargetLauncher, TargetLaunchContext } from './orchestration/launch-targets/target-launcher.js';
// Plug-in interfaces and their helpers: a routing policy module (--routing-policy PATH), a waiting-queue policy for the
// simulated engine (--schedule-policy PATH), a protocol client (--protocol PATH). examples/ shows one of each kind.
export type {
  RoutingPolicy,
  RoutingPolicyFactory,
  RoutingPolicyOptions,
  RoutingRequest,
  WorkerState,
  PolledLoad,
} from './types/routing.js';
export { isEligible, eligibleWorkers, leastInFlight } from './routing/policies/eligible.js';
export type { SchedulingPolicy, SchedulingContext, EngineRequestView } from './types/engine.js';
export type { ProtocolClientFactory, ClientRequest } from './types/client.js';
export { createProtocolClient, loadProtocolClient } from './clients/registry.js';
