import { ServelabError } from '../../errors/servelab-error.js';

/** One word for a POSIX shell: single quotes expand nothing, and a quote inside is closed, escaped and reopened. */
export function shellWord(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * One argument on an `#SBATCH` line. sbatch reads these lines itself, not through a shell (Slurm's
 * src/sbatch/opt.c, `_get_argument`): quotes group characters, a backslash makes the next character literal, and an
 * unquoted `#` starts a comment. So the value goes in double quotes with `\` and `"` escaped; `$(...)` and backticks
 * are plain text there. A line break cannot be written at all (it would end the directive and start another line of
 * the script), so it is refused, naming the setting.
 */
export function directiveWord(value: string, setting: string): string {
  if (/[\r\n\0]/.test(value)) {
    throw new ServelabError('INVALID_CONFIG', `invalid configuration: ${setting} holds a line break or NUL (${JSON.stringify(value)}), which an #SBATCH line cannot carry; give it on one line`);
  }
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}
