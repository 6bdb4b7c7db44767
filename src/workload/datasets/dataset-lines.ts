import { createReadStream } from 'node:fs';
import { ServelabError } from '../../errors/servelab-error.js';

/**
 * The longest line a JSONL dataset may have: a row is one request, and even a 128k-token prompt is a few megabytes
 * of text. Without a cap a gigabyte line passed V8's longest string (about 512 MiB) and ended in a stack trace.
 */
export const MAX_DATASET_LINE_BYTES = 64 * 2 ** 20;

const NEWLINE = 0x0a;

export interface DatasetLine {
  /** The line's text, without its line end. */
  text: string;
  /** 1-based. */
  lineNumber: number;
}

/**
 * The lines of a JSONL dataset file, read as bytes: each line is decoded as strict UTF-8, so invalid bytes are an error
 * naming the file and the line (a lenient decoder turned them into U+FFFD silently), and a line longer than
 * `maxLineBytes` fails as soon as it passes the cap, before it is ever held whole.
 */
export async function* readDatasetLines(path: string, maxLineBytes = MAX_DATASET_LINE_BYTES): AsyncGenerator<DatasetLine> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  let pieces: Buffer[] = [];
  let pendingBytes = 0;
  let lineNumber = 1;
  const lineText = (bytes: Buffer): string => {
    try {
      return decoder.decode(bytes);
    } catch {
      throw new ServelabError('INVALID_DATASET', `dataset ${path}, line ${lineNumber}: not valid UTF-8; save the file as UTF-8`);
    }
  };
  const tooLong = (): ServelabError =>
    new ServelabError('INVALID_DATASET', `dataset ${path}, line ${lineNumber}: longer than ${maxLineBytes} bytes (${maxLineBytes / 2 ** 20} MiB), the most one row may hold; is the file JSONL, one request a line?`);
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(NEWLINE, start);
      if (end < 0) {
        pendingBytes += chunk.length - start;
        if (pendingBytes > maxLineBytes) throw tooLong();
        pieces.push(chunk.subarray(start));
        break;
      }
      if (pendingBytes + end - start > maxLineBytes) throw tooLong();
      const bytes = pieces.length === 0 ? chunk.subarray(start, end) : Buffer.concat([...pieces, chunk.subarray(start, end)]);
      pieces = [];
      pendingBytes = 0;
      yield { text: lineText(bytes), lineNumber };
      lineNumber++;
      start = end + 1;
    }
  }
  if (pendingBytes > 0) yield { text: lineText(Buffer.concat(pieces)), lineNumber };
}
