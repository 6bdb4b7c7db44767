import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';

/**
 * Writes a file so that readers see either the old content or the whole new content, never a torn file: write to a
 * temporary sibling, flush it to disk, then rename over the target (rename is atomic within one filesystem).
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array | Iterable<string>): Promise<void> {
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
  } catch (error) {
    await handle.close();
    await rm(temporaryPath, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temporaryPath, path);
}
