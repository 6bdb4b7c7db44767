import { runWindowOf, screenRecords } from '../analysis/data-quality.js';
import { correctRunClocks } from '../analysis/clock-offset/correct-run-clocks.js';
import { summarize } from '../analysis/summarize.js';
import { writeRunFiles } from '../report/write-run-files.js';
import type { MeasuredRun } from '../orchestration/measured-run.js';
import type { RunData } from '../types/run.js';
import { servelabVersion } from '../utils/version.js';
import { toTestResult, type TestResult } from './test-result.js';

/** Turns what a run measured into its files and its result: analysis, then every reporter. */
export async function finishRun(options: MeasuredRun): Promise<TestResult> {
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
  };
  const run = correctRunClocks(measured);
  // Server instants are now on the client's clock where the requests proved an offset: anything still outside the
  // run (with SERVER_TIME_TOLERANCE_S) or running backwards is left empty and counted (data-quality.ts).
  screenRecords(run.records, runWindowOf(run.records, run.info.endTime));
  const summary = summarize(run, { slo: options.slo });
  const files = await writeRunFiles(run, summary, options.outputDirectory);
  return toTestResult(run, summary, options.outputDirectory, files);
}
