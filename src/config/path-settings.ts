/**
 * Settings holding file paths. In a config file they are relative to the file; in a submitted job they are made
 * absolute on the submitting host, so the job reads the same files wherever Slurm starts it.
 */
export const PATH_SETTINGS = ['datasetPath', 'tracePath', 'tokenizerPath', 'outputDir', 'resultsRoot', 'profile'] as const;

/** A profile may be a built-in name; only values that look like files are paths. */
export function isPathValue(key: string, value: string): boolean {
  return key !== 'profile' || /[/\\]|\.json$/.test(value);
}
