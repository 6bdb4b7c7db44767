/** Exit codes: 0 when the run completed (failed requests are results, not crashes). */
export const EXIT_OK = 0;
/** Something stopped the run (a server that never got ready, an unreachable URL, a port in use, ...). */
export const EXIT_FAILED = 1;
/** The command line or configuration was invalid; nothing was started. */
export const EXIT_USAGE = 2;
/** The run was interrupted (Ctrl-C or SIGTERM); what was measured was written. */
export const EXIT_INTERRUPTED = 130;
