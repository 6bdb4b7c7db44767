import { open } from 'node:fs/promises';

/**
 * Reads what a job has added to its output file since the last read, whole lines only: a line still being written
 * (or a character cut in two by the read) waits for its end, so relayed progress lines are never broken. The file
 * appears when the job starts.
 */
export class JobOutputTail {
  private offset = 0;
  private partial = Buffer.alloc(0);

  constructor(private readonly path: string) {}

  /** New complete lines (each with its line break); at `final`, also the last unterminated piece. */
  async read(final = false): Promise<string> {
    const handle = await open(this.path, 'r').catch(() => undefined);
    const chunks: Buffer[] = [this.partial];
    if (handle !== undefined) {
      try {
        const buffer = Buffer.alloc(64 * 1024);
        for (;;) {
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
          if (bytesRead === 0) break;
          this.offset += bytesRead;
          chunks.push(Buffer.from(buffer.subarray(0, bytesRead)));
        }
      } finally {
        await handle.close();
      }
    }
    const bytes = Buffer.concat(chunks);
    const end = final ? bytes.length : bytes.lastIndexOf(0x0a) + 1;
    this.partial = Buffer.from(bytes.subarray(end));
    const text = bytes.subarray(0, end).toString('utf8');
    return final && text !== '' && !text.endsWith('\n') ? `${text}\n` : text;
  }
}
