/**
 * The few lines of sh every step runs before the command, on the compute node. They give a step the guarantees the
 * local placement's process groups give (docs/placement.md):
 *
 * - the first line says which step this is and on which node (`# servelab: step 12.3 on node gpu07`), so servelab
 *   can signal and cancel the step by its id and the log says where the process ran;
 * - the command leads a process group of its own (setsid): when it ends, whatever it started and left behind is
 *   killed with it. Slurm alone would miss those: without cgroups (proctrack/linuxproc) it finds a step's processes
 *   by parentage, and a worker whose parent died has been handed to init;
 * - a SIGTERM (scancel --signal TERM) goes on to the whole group; the command's own exit status, or the signal
 *   that ended it, becomes the step's, so srun reports it;
 * - the GPUs servelab chose (`CUDA_VISIBLE_DEVICES`, carried as SERVELAB_CUDA_VISIBLE_DEVICES) are set last: Slurm
 *   sets CUDA_VISIBLE_DEVICES itself in a step that holds GPUs, over what srun exported.
 *
 * Arguments: the command and its arguments (`sh -c STEP_WRAPPER sh command args...`).
 */
export const STEP_WRAPPER = [
  'echo "# servelab: step $SLURM_JOB_ID.$SLURM_STEP_ID on node $SLURMD_NODENAME"',
  // A background job of a non-interactive shell leads no group, so setsid makes one without forking: $! leads it.
  'if [ -n "${SERVELAB_CUDA_VISIBLE_DEVICES:-}" ]; then export CUDA_VISIBLE_DEVICES="$SERVELAB_CUDA_VISIBLE_DEVICES"; fi',
  'setsid "$@" </dev/null & leader=$!',
  "trap 'kill -TERM -- -$leader 2>/dev/null' TERM INT HUP",
  // wait returns early when a trapped signal arrives: wait again until the leader is gone (reaped, so kill -0 fails).
  'while :; do wait $leader; status=$?; kill -0 $leader 2>/dev/null || break; done',
  // What the leader left behind in its group.
  'kill -KILL -- -$leader 2>/dev/null',
  'trap - TERM INT HUP',
  // Ended by a signal: end the same way, so that srun says which (task 0: Killed) and exits 128 + signal.
  'if [ $status -gt 128 ]; then kill -$((status - 128)) $$; fi',
  'exit $status',
  // One line, so that the log's first line (the command servelab ran) stays one line.
].join('; ');

/** The first line a step prints: its id (JOBID.STEPID) and its node. */
export const STEP_LINE = /^# servelab: step (\d+\.\d+) on node (\S+)/;
