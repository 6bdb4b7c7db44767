import type { RunData } from './run.js';
import type { Summary } from './summary.js';

/** What every reporter is given: the run as measured, its metrics, and the run directory to write into. */
export interface ReportContext {
  run: RunData;
  summary: Summary;
  /** The run directory (`results/<run-id>/` or `--output-dir`); reporters create it when missing. */
  outputDirectory: string;
}

/** Writes one kind of output file (or a few related ones). Writes are atomic: readers never see a torn file. */
export interface Reporter {
  readonly name: string;
  /**
   * Its write does most of its work off the main thread (a worker) once started: a run starts it before the others
   * and lets them run meanwhile, instead of waiting for it in turn.
   */
  readonly concurrent?: boolean;
  /** Resolves to the paths it wrote. */
  write(context: ReportContext): Promise<string[]>;
}
