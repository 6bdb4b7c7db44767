import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestsJournal } from '../../../src/report/jsonl/requests-journal.js';
import { fullyTracedRecord, T0 } from '../../analysis/records.js';

/** A small tmpfs that fills up: needs root (CAP_SYS_ADMIN); the test is skipped where it cannot be mounted. */
describe('the requests journal on a disk that fills up', () => {
  let mountPoint = '';
  let mounted = false;
  beforeAll(async () => {
    mountPoint = await mkdtemp(join(tmpdir(), 'servelab-journal-full-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mountPoint], { stdio: 'ignore' });
      mounted = true;
    } catch {
      mounted = false;
    }
  });
  afterAll(async () => {
    if (mounted) execFileSync('umount', [mountPoint], { stdio: 'ignore' });
    await rm(mountPoint, { recursive: true, force: true });
  });

  it('cuts a write that stopped part way back to its last whole line, and counts the records on disk', async (context) => {
    if (!mounted) {
      console.warn('skipped: cannot mount a small tmpfs here (needs root and CAP_SYS_ADMIN) to fill a disk');
      context.skip();
      return;
    }
    const directory = join(mountPoint, 'run');
    await mkdir(directory);
    const journal = new RequestsJournal();
    await journal.open({ outputDirectory: directory, runId: 'full', testLevel: 'node', target: 'sim', requestRate: 5, config: {} });
    journal.start(T0);
    // About 300 kB of lines: more than one block, and far more than the 64 kB disk holds.
    for (let index = 0; index < 600; index++) journal.record(fullyTracedRecord(index * 0.01, { requestId: `r-${index}` }));
    await journal.close();
    const text = await readFile(join(directory, 'requests.jsonl'), 'utf8');
    expect(text.length).toBeGreaterThan(0);
    // No torn last line: every line on disk is a whole record.
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.split('\n').slice(0, -1);
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    // The count given is the count on disk.
    expect(journal.recordsWritten).toBe(lines.length);
    expect(journal.writeFailure?.message).toMatch(/the disk is full/);
    expect(journal.notices.find((notice) => notice.source === 'disk')?.message).toContain(`(${lines.length} records were written to it before)`);
  });
});
