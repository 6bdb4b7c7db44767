/** What a run reports while it goes, for progress displays. */
export interface RunProgress {
  phase: 'starting' | 'warmup' | 'running' | 'draining' | 'writing' | 'done';
  /** A human-readable note for the current phase (e.g. "launching sim-server"). */
  message?: string;
  totalRequests: number;
  sent: number;
  inFlight: number;
  /** Finished requests, failed ones included. */
  completed: number;
  failed: number;
  elapsedMs: number;
}

export type ProgressListener = (progress: RunProgress) => void;
