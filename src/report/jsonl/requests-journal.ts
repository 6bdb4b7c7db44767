import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { RequestRecord } from '../../types/record.js';
import type { JournalRunInfo, RunJournal } from '../../types/run-journal.js';
import type { RunEvent, RunNotice } from '../../types/run.js';
import type { EpochSeconds } from '../../types/time.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { servelabVersion } from '../../utils/version.js';
import { writeFailure } from '../../utils/write-failure.js';
import { CONFIG_JSON } from '../config/config-reporter.js';
import { toJson } from '../json-format.js';
import { roundToMicroseconds } from '../relative-time.js';
import { SUMMARY_FORMAT_VERSION, SUMMARY_JSON, encodeSummaryFile, noticesToFile } from '../summary/summary-file.js';
import { TextBytesWriter } from '../../utils/text-bytes-writer.js';
import { REQUESTS_JSONL, writeRecordJsonLine } from './jsonl-reporter.js';

/** How often buffered records go to disk: a SIGKILL loses at most this much of finished work. */
const FLUSH_INTERVAL_MS = 200;
/**
 * Lines are written as bytes as they come, and a block of this size is written at once, whatever the time. Lines held
 * as strings until the next flush (200 ms) outlived two scavenges, were promoted to the old generation and, as garbage
 * there, grew the heap (and RSS) by about 1 kB per request until the next full collection.
 */
const BLOCK_BYTES = 1 << 18;

/**
 * The run journal (see RunJournal) on the run directory's own files. requests.jsonl grows in the order requests
 * finish; the jsonl reporter rewrites it in workload order at the end (atomically: until then, the journal stays).
 */
export class RequestsJournal implements RunJournal {
  readonly #notices: RunNotice[] = [];
  readonly #events: RunEvent[] = [];
  #run: JournalRunInfo | undefined;
  #handle: FileHandle | undefined;
  #path = '';
  #t0: EpochSeconds | undefined;
  /** Records finished before t0 was known (none, in practice: only warmups finish before it). */
  #early: RequestRecord[] = [];
  #pending = new TextBytesWriter(BLOCK_BYTES + (1 << 16));
  #bufferedRecords = 0;
  #written = 0;
  /** Bytes of whole lines in requests.jsonl: where a torn write is cut back to. */
  #bytesOnDisk = 0;
  /** Writes happen one after another, in order. */
  #writing: Promise<void> = Promise.resolve();
  #summaryWriting: Promise<void> = Promise.resolve();
  #failed = false;
  #failure: Error | undefined;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;

  get notices(): readonly RunNotice[] {
    return this.#notices;
  }

  get recordsWritten(): number {
    return this.#written;
  }

  get writeFailure(): Error | undefined {
    return this.#failure;
  }

  async open(run: JournalRunInfo): Promise<void> {
    this.#run = run;
    const configPath = join(run.outputDirectory, CONFIG_JSON);
    // The same content the config reporter writes at the end, so that file does not change.
    await writeFileAtomic(configPath, toJson({ test: run.testLevel, ...run.config })).catch((error: unknown) => {
      throw writeFailure(configPath, error);
    });
    this.#path = join(run.outputDirectory, REQUESTS_JSONL);
    this.#handle = await open(this.#path, 'w').catch((error: unknown) => {
      throw writeFailure(this.#path, error);
    });
  }

  start(t0: EpochSeconds): void {
    if (this.#t0 !== undefined) return;
    this.#t0 = t0;
    for (const record of this.#early) this.record(record);
    this.#early = [];
    this.#timer = setInterval(() => this.#flush(), FLUSH_INTERVAL_MS);
    this.#timer.unref();
    this.#writeProvisionalSummary();
  }

  record(record: RequestRecord): void {
    if (record.warmup || this.#failed || this.#closed) return;
    if (this.#t0 === undefined) {
      this.#early.push(record);
      return;
    }
    writeRecordJsonLine(this.#pending, record, this.#t0);
    this.#bufferedRecords++;
    if (this.#pending.length >= BLOCK_BYTES) this.#flush();
  }

  notice(notice: RunNotice): void {
    this.#notices.push(notice);
    this.#writeProvisionalSummary();
  }

  event(event: RunEvent): void {
    this.#events.push(event);
    this.#writeProvisionalSummary();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#flush();
    this.#closed = true;
    await this.#writing;
    await this.#summaryWriting;
    await this.#handle?.close().catch(() => undefined);
    this.#handle = undefined;
    // A run that never started measuring (its servers failed to start, say) leaves no empty requests.jsonl behind.
    if (this.#t0 === undefined && this.#early.length === 0 && this.#path !== '') await rm(this.#path, { force: true });
  }

  #flush(): void {
    const handle = this.#handle;
    if (this.#pending.length === 0 || handle === undefined || this.#failed) return;
    // A copy: the next lines are written while this one is on its way.
    const bytes = this.#pending.take();
    const count = this.#bufferedRecords;
    this.#bufferedRecords = 0;
    this.#writing = this.#writing.then(async () => {
      if (this.#failed) return;
      // A write may take only part of the bytes: the rest follows.
      let offset = 0;
      try {
        while (offset < bytes.length) {
          const { bytesWritten } = await handle.write(bytes, offset);
          if (bytesWritten === 0) throw new Error(`the write to ${this.#path} took no bytes`);
          offset += bytesWritten;
        }
        this.#written += count;
        this.#bytesOnDisk += bytes.length;
      } catch (error) {
        this.#failed = true;
        this.#failure = writeFailure(this.#path, error);
        await this.#keepWholeLines(handle, bytes, offset);
        this.#notices.push({ source: 'disk', message: `${this.#failure.message} (${this.#written} records were written to it before)` });
      }
    });
  }

  /**
   * After a write that stopped part way (a full disk took the first `writtenBytes` of `bytes`): the whole lines among
   * them count as written, and the file is cut back to the end of the last one, so it never ends in a torn line
   * (truncating needs no space). Cutting may fail too; the reader then drops the torn tail (`servelab report`).
   */
  async #keepWholeLines(handle: FileHandle, bytes: Uint8Array, writtenBytes: number): Promise<void> {
    const wholeBytes = writtenBytes === 0 ? 0 : bytes.lastIndexOf(0x0a, writtenBytes - 1) + 1;
    let lines = 0;
    for (let index = 0; index < wholeBytes; index++) if (bytes[index] === 0x0a) lines++;
    this.#written += lines;
    this.#bytesOnDisk += wholeBytes;
    if (wholeBytes < writtenBytes) await handle.truncate(this.#bytesOnDisk).catch(() => undefined);
  }

  /**
   * summary.json until the run writes the real one: what `servelab report DIR` needs beyond the records (t0 as an
   * epoch, the events, the notices). Marked `provisional`, with status `running`.
   */
  #writeProvisionalSummary(): void {
    const run = this.#run;
    const t0 = this.#t0;
    if (run === undefined || t0 === undefined || this.#closed) return;
    const content = toJson(
      encodeSummaryFile({
        format: 'servelab-summary',
        formatVersion: SUMMARY_FORMAT_VERSION,
        provisional: true,
        run: {
          runId: run.runId,
          testLevel: run.testLevel,
          target: run.target,
          status: 'running',
          startTime: t0,
          endTime: t0,
          requestRate: run.requestRate,
          simulated: false,
          servelabVersion,
          t0,
        },
        events: this.#events.map((event) => ({ ...event, time: roundToMicroseconds(event.time - t0) })),
        notices: noticesToFile(this.#notices, t0),
      }),
    );
    const path = join(run.outputDirectory, SUMMARY_JSON);
    this.#summaryWriting = this.#summaryWriting.then(() =>
      writeFileAtomic(path, content).catch((error: unknown) => {
        // Not a notice of its own each time: the records matter, and a full disk is reported by their file.
        if (!this.#notices.some((notice) => notice.source === 'disk')) this.#notices.push({ source: 'disk', message: writeFailure(path, error).message });
      }),
    );
  }
}
