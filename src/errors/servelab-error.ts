/**
 * Stable error codes. Each names a kind of problem the user can act on; the message says what to do.
 * Codes are part of the public API: add new ones, never rename.
 */
export type ErrorCode =
  | 'INVALID_CONFIG'
  | 'INVALID_DATASET'
  | 'INVALID_PROFILE'
  | 'INVALID_RUN_DIRECTORY'
  | 'FILE_NOT_FOUND'
  | 'PORT_IN_USE'
  | 'UNREACHABLE'
  | 'NOT_READY'
  | 'PROCESS_EXITED'
  | 'NOT_INSTALLED'
  | 'MODULE_LOAD_FAILED'
  | 'PROTOCOL_ERROR'
  | 'INTERRUPTED'
  | 'DISK_FULL'
  | 'WRITE_FAILED'
  /** sbatch refused a job, or Slurm could not be asked about one (docs/slurm.md). */
  | 'SLURM_JOB_FAILED'
  | 'INTERNAL';

/**
 * The one error base class. Thrown for problems that stop a run before or while it starts (bad input, a server that
 * never gets ready). A request that fails during a run is never an exception: it is a record with an error class.
 */
export class ServelabError extends Error {
  readonly code: ErrorCode;
  /** Extra lines shown under the message, such as the tail of a server's log. */
  readonly details?: string;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; details?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServelabError';
    this.code = code;
    if (options?.details !== undefined) this.details = options.details;
  }
}

export function isServelabError(value: unknown): value is ServelabError {
  return value instanceof ServelabError;
}
