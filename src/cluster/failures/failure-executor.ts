import type { Clock } from '../../clock/clock.js';
import type { FailureAction } from '../../config/schema.js';
import type { ServerHandle } from '../../types/cluster.js';
import type { PdRole, RunEvent } from '../../types/run.js';
import type { RouterControl } from './router-control.js';

type NodeCondition = 'up' | 'crashed' | 'hung' | 'drained';

export interface FailureExecutorOptions {
  actions: FailureAction[];
  /** The cluster's servers by node index; a restore may replace an entry with the relaunched server. */
  nodes: ServerHandle[];
  /** The URL the router knows each node by (its tap's URL when taps are on). */
  routerWorkerUrls: string[];
  router?: RouterControl;
  /**
   * Prefill/decode disaggregation: each node's role by index, so that every event names the side it hit (a crashed
   * prefill server and a crashed decode server fail different requests in different ways). Absent when co-located.
   */
  roles?: readonly PdRole[];
  clock: Clock;
  /** Called just before the executor kills a node on purpose, so a process watch does not take it for a death. */
  onCrash?: (node: number) => void;
  /** Called with a node's new server once it was relaunched, so it can be watched in turn. */
  onRelaunch?: (node: number, server: ServerHandle) => void;
}

/**
 * Carries out a failure schedule (docs/metrics.md, Events) during a routing test: crash = SIGKILL to the node's process group,
 * hang = SIGSTOP (a node that accepts connections but never answers), drain = removed from the router, restore =
 * relaunched (crashed), resumed with SIGCONT (hung) or registered again (drained). Every action becomes a time-stamped
 * event; one that cannot be carried out becomes an event that says why, and the run goes on.
 */
export class FailureExecutor {
  readonly events: RunEvent[] = [];
  readonly #options: FailureExecutorOptions;
  readonly #conditions: NodeCondition[];
  readonly #timers: NodeJS.Timeout[] = [];
  #pending: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: FailureExecutorOptions) {
    this.#options = options;
    this.#conditions = options.nodes.map(() => 'up');
  }

  /** Schedules every action relative to `originMs` (the load's `t0` on the clock's monotonic scale). */
  start(originMs: number): void {
    for (const action of this.#options.actions) {
      const dueMs = originMs + action.atS * 1000;
      const fire = (rearmsLeft: number): void => {
        const earlyMs = dueMs - this.#options.clock.nowMs();
        // Node's timers count whole milliseconds from the event loop's cached time, so one fires up to a millisecond or
        // so before its instant on the monotonic clock, and the event would be stamped before the instant the schedule
        // names: wait out such a remainder (a few times at most; a larger one is a clock that does not move, a test's).
        if (earlyMs > 0 && earlyMs < 20 && rearmsLeft > 0) {
          this.#timers.push(setTimeout(() => fire(rearmsLeft - 1), Math.ceil(earlyMs)));
          return;
        }
        // Actions run one after another in schedule order, even when a relaunch takes longer than the gap to the next.
        this.#pending = this.#pending.then(() => this.#perform(action));
      };
      this.#timers.push(setTimeout(() => fire(4), Math.max(0, dueMs - this.#options.clock.nowMs())));
    }
  }

  /** Cancels what has not happened yet, waits for what is under way, and resumes hung nodes so they can be stopped. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    await this.#pending;
    this.#conditions.forEach((condition, node) => {
      if (condition === 'hung') this.#options.nodes[node]?.signal?.('SIGCONT');
    });
  }

  get nodes(): ServerHandle[] {
    return this.#options.nodes;
  }

  async #perform(action: FailureAction): Promise<void> {
    if (this.#stopped) return;
    const targets = action.action === 'restore' && action.nodes.length === 0 ? this.#conditions.map((_, node) => node).filter((node) => this.#conditions[node] !== 'up') : action.nodes;
    for (const node of targets) {
      // The event is stamped when the action starts; how long it took (a relaunch takes a while) goes in its detail.
      const time = this.#options.clock.nowEpochSeconds();
      const startedMs = this.#options.clock.nowMs();
      const outcome = await this.#apply(action.action, node).catch((error: unknown) => `failed: ${error instanceof Error ? error.message : String(error)}`);
      const tookMs = this.#options.clock.nowMs() - startedMs;
      const timed = tookMs >= 10 ? `${outcome ?? 'done'} in ${(tookMs / 1000).toFixed(2)} s` : outcome;
      // A server placed on a named machine (a Slurm node) is named by it too: the index alone says nothing about where.
      const placedOn = this.#options.nodes[node]?.node;
      const detail = placedOn === undefined ? timed : `on node ${placedOn}${timed === undefined ? '' : `: ${timed}`}`;
      const role = this.#options.roles?.[node];
      this.events.push({ time, kind: action.action, node, ...(role === undefined ? {} : { role }), ...(detail === undefined ? {} : { detail }) });
    }
  }

  async #apply(kind: FailureAction['action'], node: number): Promise<string | undefined> {
    const server = this.#options.nodes[node];
    if (server === undefined) return 'no such node';
    switch (kind) {
      case 'crash':
        if (server.signal === undefined) return 'not launched by servelab: cannot be crashed';
        this.#options.onCrash?.(node);
        server.signal('SIGKILL');
        this.#conditions[node] = 'crashed';
        return undefined;
      case 'hang':
        if (server.signal === undefined) return 'not launched by servelab: cannot be hung';
        server.signal('SIGSTOP');
        this.#conditions[node] = 'hung';
        return undefined;
      case 'drain':
        if (this.#options.router === undefined) return 'this router cannot remove workers at run time';
        await this.#options.router.removeWorker(this.#options.routerWorkerUrls[node] as string);
        this.#conditions[node] = 'drained';
        return undefined;
      case 'restore':
        return this.#restore(node, server);
    }
  }

  async #restore(node: number, server: ServerHandle): Promise<string | undefined> {
    const condition = this.#conditions[node];
    if (condition === 'hung') {
      server.signal?.('SIGCONT');
    } else if (condition === 'crashed') {
      if (server.relaunch === undefined) return 'cannot be relaunched';
      await server.stop().catch(() => undefined);
      const relaunched = await server.relaunch();
      this.#options.nodes[node] = relaunched;
      this.#options.onRelaunch?.(node, relaunched);
    } else if (condition === 'drained') {
      await this.#options.router?.addWorker(this.#options.routerWorkerUrls[node] as string);
    } else {
      return 'was not failed';
    }
    this.#conditions[node] = 'up';
    return condition === 'crashed' ? 'relaunched' : undefined;
  }
}
