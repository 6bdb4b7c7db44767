import { ServelabError } from '../../errors/servelab-error.js';

/** Turns a failure to open a dataset file into an error that names the file and the fix. */
export function datasetFileError(path: string, error: unknown, whatToGive: string): ServelabError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') {
    return new ServelabError(
      'FILE_NOT_FOUND',
      `dataset file not found: ${path}. Give --dataset-path the path of ${whatToGive} on this machine ` +
        '(servelab never downloads datasets)',
      { cause: error },
    );
  }
  if (code === 'EISDIR') {
    return new ServelabError('INVALID_DATASET', `dataset path ${path} is a directory; give the path of ${whatToGive}`, {
      cause: error,
    });
  }
  return new ServelabError(
    'INVALID_DATASET',
    `cannot read dataset file ${path}: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );
}
