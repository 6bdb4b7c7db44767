import { readFileSync } from 'node:fs';

/** servelab's own version, read from package.json (two levels above both `src/utils` and `dist/src/utils`). */
function readVersion(): string {
  for (const relative of ['../../package.json', '../../../package.json']) {
    try {
      const parsed = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (parsed.name === 'servelab' && typeof parsed.version === 'string') return parsed.version;
    } catch {
      // Try the next location.
    }
  }
  return '0.0.0';
}

export const servelabVersion = readVersion();
