import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';
import { writeFailure } from './write-failure.js';

/**
 * Writes a file so that readers see either the old content or the whole new content, never a torn file: write to a
 * temporary sibling, flush it to disk, then rename over the target (rename is atomic within one filesystem).
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array | Iterable<string | Uint8Array>): Promise<void> {
  try {
    await writeAtomically(path, content);
  } catch (error) {
    // One line naming the file (and saying so plainly when the disk is full), whatever step failed.
    throw writeFailure(path, error);
  }
}

/** The temporary sibling's name: hidden, and recognisable so that `removeStaleTemporaryFiles` can clean up after a kill. */
export function isTemporaryFileName(name: string): boolean {
  return /^\..+\.[0-9a-f]{12}\.tmp$/.test(name);
}

/**
 * Removes the temporary files a writer killed mid-write (SIGKILL, power loss) left in a directory. Returns their names.
 */
export async function removeStaleTemporaryFiles(directory: string): Promise<string[]> {
  const names = await readdir(directory).catch(() => [] as string[]);
  const stale = names.filter(isTemporaryFileName);
  await Promise.all(stale.map((name) => rm(join(directory, name), { force: true })));
  return stale;
}

async function writeAtomically(path: string, content: string | Uint8Array | Iterable<string | Uint8Array>): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporaryPath = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporaryPath, 'w');
  try {
    if (typeof content === 'string' || content instanceof Uint8Array) {
      await handle.writeFile(content);
    } else {
      // Large tables arrive as chunks so that a million rows never become one giant string.
      let buffered: string[] = [];
      let bufferedLength = 0;
      for (const piece of content) {
        if (typeof piece !== 'string') {
          // Bytes go out as they come (after any text before them).
          if (buffered.length > 0) await handle.write(buffered.join(''));
          buffered = [];
          bufferedLength = 0;
          await handle.writeFile(piece);
          continue;
        }
        buffered.push(piece);
        bufferedLength += piece.length;
        if (bufferedLength > 1 << 20) {
          await handle.write(buffered.join(''));
          buffered = [];
          bufferedLength = 0;
        }
      }
      if (buffered.length > 0) await handle.write(buffered.join(''));
    }
    await handle.sync();
    await handle.close();
    await rename(temporaryPath, path);
  } catch (error) {
    // Whatever step failed, no temporary file is left behind (a second close of a closed handle is harmless).
    await handle.close().catch(() => undefined);
    await rm(temporaryPath, { force: true });
    throw error;
  }
}
