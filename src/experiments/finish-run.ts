import { runWindowOf, screenRecords } from '../analysis/data-quality.js';
import { correctRunClocks } from '../analysis/clock-offset/correct-run-clocks.js';
import { summarize } from '../analysis/summarize.js';
import { ServelabError, isServelabError } from '../errors/servelab-error.js';
import { canonicalizeRecord } from '../report/jsonl/jsonl-reporter.js';
import { roundToMicroseconds } from '../report/relative-time.js';
import { writeRunFilesReportingFailures } from '../report/write-run-files.js';
import type { MeasuredRun } from '../orchestration/measured-run.js';
import type { RunData, RunNotice } from '../types/run.js';
import type { Summary } from '../types/summary.js';
import { servelabVersion } from '../utils/version.js';
import { toTestResult, type TestResult } from './test-result.js';

/**
 * A full disk stopped the run's files after the run itself was measured: `result` holds it, whole, as it is in memory,
 * so that the terminal summary still prints (every record was measured; only the files are short).
 */
export class DiskFullAfterRun extends ServelabError {
  readonly result: TestResult;

  constructor(message: string, cause: unknown, result: TestResult) {
    super('DISK_FULL', message, { cause });
    this.result = result;
  }
}

/**
 * Turns what a run measured into its files and its result: analysis, then every reporter. A reporter that fails is a
 * notice on the run, not a lost run; only a full disk ends it with an error (one line naming the file), after every
 * file that could be written was, and with every record that reached disk before still in requests.jsonl.
 */
export async function finishRun(options: MeasuredRun): Promise<TestResult> {
  // The journal's own notices (a write that failed) beside the run's.
  await options.journal?.close();
  const notices: RunNotice[] = [...(options.notices ?? [])];
  for (const notice of options.journal?.notices ?? []) if (!notices.includes(notice)) notices.push(notice);
  const measured: RunData = {
    info: {
      runId: options.runId,
      testLevel: options.testLevel,
      target: options.target,
      status: options.load.interrupted ? 'interrupted' : 'completed',
      startTime: options.load.startTime,
      endTime: options.load.endTime,
      requestRate: options.requestRate,
      simulated: options.simulated ?? false,
      servelabVersion,
    },
    config: { test: options.testLevel, ...options.config },
    records: options.load.records,
    events: options.events,
    ...(options.extras === undefined ? {} : { extras: options.extras }),
    ...(notices.length === 0 ? {} : { notices }),
  };
  // The values the files will hold, so that `servelab report DIR` (which reads only the files) rewrites them bit for bit:
  // the raw records as requests.jsonl keeps them, before the clock correction (which report DIR repeats from them).
  const t0 = measured.info.startTime;
  for (const record of measured.records) canonicalizeRecord(record, t0);
  measured.events = measured.events.map((event) => ({ ...event, time: roundToMicroseconds(event.time - t0) + t0 }));
  const run = correctRunClocks(measured);
  // Server instants are now on the client's clock where the requests proved an offset: anything still outside the
  // run (with SERVER_TIME_TOLERANCE_S) or running backwards is left empty and counted (data-quality.ts).
  screenRecords(run.records, runWindowOf(run.records, run.info.endTime));
  // Worked out when a reporter first needs it: the parquet worker starts before it.
  let summary: Summary | undefined;
  const summaryOfRun = (): Summary => (summary ??= summarize(run, { slo: options.slo }));
  const { written, failures } = await writeRunFilesReportingFailures(run, summaryOfRun, options.outputDirectory);
  const diskFull = failures.find((failure) => isServelabError(failure.error) && failure.error.code === 'DISK_FULL');
  if (diskFull !== undefined) {
    // Name the file the disk filled up under first: the records' own, when it was that one.
    const journalFailure = options.journal?.writeFailure;
    if (isServelabError(journalFailure) && journalFailure.code === 'DISK_FULL') {
      const message = `${journalFailure.message} (${options.journal?.recordsWritten ?? 0} of ${run.records.length} records reached it)`;
      throw new DiskFullAfterRun(message, journalFailure, toTestResult(run, summaryOfRun(), options.outputDirectory, written));
    }
    throw new DiskFullAfterRun((diskFull.error as ServelabError).message, diskFull.error, toTestResult(run, summaryOfRun(), options.outputDirectory, written));
  }
  return toTestResult(run, summaryOfRun(), options.outputDirectory, written);
}
