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
