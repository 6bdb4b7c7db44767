import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSettingsFile } from '../../src/cli/read-settings-file.js';
import { MAX_SETTINGS_FILE_BYTES } from '../../src/config/size-limits.js';

describe('settings files', () => {
  it('a file above the settings-file cap is refused before it is read (a sparse 300 MB file: nothing is allocated)', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'servelab-settings-'));
    try {
      const path = join(directory, 'huge.yaml');
      await writeFile(path, 'numPrompts: 10\n');
      await truncate(path, 300 * 2 ** 20);
      await expect(readSettingsFile(path, 'config file')).rejects.toThrow(new RegExp(`holds 314572800 bytes, above the ${MAX_SETTINGS_FILE_BYTES} `));
      const small = join(directory, 'small.yaml');
      await writeFile(small, 'numPrompts: 10\n');
      await expect(readSettingsFile(small, 'config file')).resolves.toEqual({ numPrompts: 10 });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
