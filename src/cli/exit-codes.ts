/** Exit codes: 0 when the run completed (failed requests are results, not crashes). */
export const EXIT_OK = 0;
/** Something stopped the run (a server that never got ready, an unreachable URL, a port in use, ...). */
export const EXIT_FAILED = 1;
/** The command line or configuration was invalid; nothing was started. */
export const EXIT_USAGE = 2;
/** The run was interrupted (Ctrl-C or SIGTERM); what was measured was written. */
export const EXIT_INTERRUPTED = 130;
/**
 * A sweep finished, but at least one of its runs failed (its row in sweep.csv says why): every run's files, the failed
 * ones' included, are kept. Distinct from 1 so a script can tell "some points failed" from "the sweep could not run".
 */
export const EXIT_SWEEP_RUN_FAILED = 3;
