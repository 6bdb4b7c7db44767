import type { NodeTestConfig, RoutingTestConfig } from '../../config/schema.js';
import type { ProcessPlacement, ServerHandle } from '../../types/cluster.js';
import type { DerivedColumnName } from '../../types/summary.js';

/** What a target launches with: where its processes run and where their logs go. */
export interface TargetLaunchContext {
  placement: ProcessPlacement;
  /** The run's `logs/` directory: one file per launched process. */
  logsPath: string;
  /** The node server `index` runs on (undefined: the placement's default), and its index among that node's servers. */
  serverNode(index: number): { node: string | undefined; indexOnNode: number };
  /** The nodes server `index` spans, rank 0's first, when servers span nodes (SGLang's `--nnodes`); else undefined. */
  serverNodeGroup?(index: number): readonly string[] | undefined;
  /**
   * Aborts the start-up (a Ctrl-C, or another server's failed start): a launcher that takes it stops what it was
   * starting and rejects at once; one that ignores it is waited for, and what it started is stopped then.
   */
  signal?: AbortSignal;
}

/** Server i on `nodes[i % length]`, counted per node (for GPU ids); every server on the default node without nodes. */
export function roundRobinNodes(nodes: readonly string[] | undefined): TargetLaunchContext['serverNode'] {
  return (index) => {
    if (nodes === undefined || nodes.length === 0) return { node: undefined, indexOnNode: index };
    return { node: nodes[index % nodes.length], indexOnNode: Math.floor(index / nodes.length) };
  };
}

/**
 * A target (`--target`): the servers a test measures, and everything the orchestration needs to know about them, in
 * one place. The builtin ones are `sim`, `sglang` and `attach` (registry.ts); any other name is a module whose
 * default export (or export `targetLauncher`) is one of these.
 */
export interface TargetLauncher {
  readonly name: string;
  /**
   * Lifecycle columns its engine does not model (their 0 is by construction, not measured): the simulated engine has
   * no tokenizer, so `tokenize_time`.
   */
  readonly unmodelledColumns: readonly DerivedColumnName[];
  /** Whether its servers are servelab processes that answer the harness endpoint about their own health. */
  readonly serversReportOnThemselves: boolean;
  /** Checks what it can in servelab's own process before anything is launched (a profile, a policy module). */
  check?(config: NodeTestConfig): Promise<void>;
  /** The progress line while a node test's server starts. */
  describeNodeStart(config: NodeTestConfig): string;
  /** The progress line while a routing test's servers start. */
  describeClusterStart(config: RoutingTestConfig): string;
  /** Starts (or attaches to) a node test's one server and waits until it is ready. */
  launchNode(config: NodeTestConfig, context: TargetLaunchContext): Promise<ServerHandle>;
  /** Runs once before a routing test's servers start, e.g. to check all their ports before any is launched. */
  prepareCluster?(config: RoutingTestConfig, context: TargetLaunchContext): Promise<void>;
  /** Starts (or attaches to) server `index` of a routing test's `numGpus` and waits until it is ready. */
  launchClusterNode(config: RoutingTestConfig, index: number, context: TargetLaunchContext): Promise<ServerHandle>;
  /**
   * A router that already runs, which a routing test sends to instead of starting servers and a router of its own
   * (attach with `--url`); undefined when the test starts its own router.
   */
  attachedRouterUrl?(config: RoutingTestConfig): string | undefined;
}

/** A launched server's ready timeout: the setting when given, else the target's default. */
export function readyTimeoutMs(config: Pick<NodeTestConfig, 'readyTimeoutS'>, defaultS: number): number {
  return (config.readyTimeoutS ?? defaultS) * 1000;
}
