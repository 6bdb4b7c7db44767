/** How a launched process ended: its exit code, or the signal that ended it. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A server (or router) that a test sends requests to, launched by servelab or attached to. */
export interface ServerHandle {
  /** For messages and the `host` column, e.g. `sim-server 0` or the attached URL. */
  name: string;
  /** Base URL, e.g. `http://127.0.0.1:30000`. */
  url: string;
  /** The launched process's id, when servelab launched it. */
  pid?: number;
  /** The node it was placed on by name (a Slurm node), when the run named one; absent on this host. */
  node?: string;
  /** The file its output goes to, when servelab launched it. */
  logPath?: string;
  /**
   * Resolves when the launched process exits, however it ends (absent for an attached server): a run watches it to
   * record an unplanned death as an event.
   */
  exited?: Promise<ProcessExit>;
  /** Where a launched SGLang server writes its request log (`--export-metrics-to-file-dir`). */
  requestLogDirectory?: string;
  /** Stops what servelab launched (nothing for an attached server). Safe to call twice. */
  stop(): Promise<void>;
  /** Sends a signal to the launched process group (SIGKILL to crash it, SIGSTOP / SIGCONT to hang and resume it). */
  signal?(signal: NodeJS.Signals): void;
  /** Starts the server again on the same address after it was crashed (launched simulated servers only). */
  relaunch?(): Promise<ServerHandle>;
}

/**
 * What to run and where: a placement starts it (docs/placement.md). The command runs with servelab's own environment
 * less the secrets no child needs, plus `env`.
 */
export interface PlacementRequest {
  /** A short name for messages, such as `sim-server 0` or `sglang (GPU 2)`. */
  name: string;
  command: string;
  args: string[];
  /** Variables added to the child's environment (the router's control token, CUDA_VISIBLE_DEVICES, ...). */
  env?: Record<string, string>;
  /** Where stdout and stderr go, interleaved as the process wrote them, on the host that runs servelab. */
  logPath?: string;
  /** How long a SIGTERM may take before SIGKILL. */
  stopGraceMs?: number;
  /**
   * The node to run on, by name (a Slurm node, a Kubernetes node); absent: the placement's default. The local
   * placement has one node, this host, and refuses any other name.
   */
  node?: string;
}

/** A process a placement started: how to watch it, read what it printed, signal it, and stop it. */
export interface PlacedProcess {
  readonly name: string;
  /** The placement's id for it, for messages: `pid 1234` locally (a Slurm launcher would give `step 5678.3`). */
  readonly id: string;
  /** The process id on this host, when it runs on this host. */
  readonly pid: number | undefined;
  /** The address other processes reach it at: where the ports it listens on are (`127.0.0.1` locally). */
  readonly host: string;
  readonly logPath: string | undefined;
  /** Resolves when the process ends, however it ends. */
  readonly exited: Promise<ProcessExit>;
  readonly hasExited: boolean;
  /** The last lines it printed. */
  logTail(): string;
  /**
   * Resolves with the match of the first output line matching `pattern`. Rejects with NOT_READY after `timeoutMs`, or
   * PROCESS_EXITED when the process ends first; both errors carry the log tail.
   */
  waitForLine(pattern: RegExp, timeoutMs: number, what: string): Promise<RegExpMatchArray>;
  /** An error (PROCESS_EXITED) for a process that ended before it could `what`, with its exit status and log tail. */
  exitFailure(what: string): Error;
  /** An error with the given code and the log tail. */
  failure(code: 'NOT_READY' | 'PROCESS_EXITED', message: string): Error;
  /** Signals everything the process started (its process group locally). */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM to everything it started, SIGKILL after the grace period; resolves once it has ended. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Where processes run: this host's process groups today (src/cluster/placement/local/); Slurm job steps or
 * Kubernetes pods are further implementations of the same interface (docs/placement.md).
 */
export interface ProcessPlacement {
  /** `local`, ... */
  readonly name: string;
  spawn(request: PlacementRequest): PlacedProcess;
  /**
   * A port free on `node` right now, for programs that cannot pick their own and print it (nginx, smg). Programs that
   * can are better started on port 0 and asked where they listen (`listeningUrl`): there is then no race.
   */
  freePort(node?: string): Promise<number>;
  /** Throws PORT_IN_USE, naming `flag`, when something already listens on `port` of `node`. */
  assertPortFree(port: number, flag: string, node?: string): Promise<void>;
  /** The address processes on `node` are reached at (`127.0.0.1` locally). */
  hostOf(node?: string): string;
}
