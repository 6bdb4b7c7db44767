import { DiskFullAfterRun } from '../experiments/finish-run.js';
import type { TestResult } from '../experiments/test-result.js';
import type { RunOptions } from '../orchestration/measured-run.js';
import { formatTerminalSummary } from '../report/terminal/format-terminal-summary.js';
import { formatRepeatsTable } from '../report/repeats/repeats-text.js';
import type { RepeatsOptions, RepeatsResult } from '../experiments/repeats/run-repeats.js';
import { isServelabError } from '../errors/servelab-error.js';
import type { RunProgress } from '../orchestration/progress.js';
import { EXIT_OK } from './exit-codes.js';
import { abortOnSignals, exitCodeFor } from './interrupts.js';
import { applyRealTimeV8Flags } from './real-time-v8-flags.js';
import { createProgressDisplay, type ProgressMode } from './progress-display.js';

export interface RunnableTest {
  config: { progress: ProgressMode; quiet: boolean; virtualTime?: boolean; repeats: number };
  run(options: RunOptions): Promise<TestResult>;
  runRepeats(options: RepeatsOptions): Promise<RepeatsResult>;
}

/** Runs a test with Ctrl-C handling and a progress display, prints the summary, and returns the exit code. */
export async function executeTest(test: RunnableTest): Promise<number> {
  if (test.config.virtualTime !== true) applyRealTimeV8Flags();
  const progress = createProgressDisplay(test.config.progress);
  // Until the first request is sent a signal stops the start-up, and there is nothing to write: its line says so, and
  // is the only one (the run's INTERRUPTED error that follows is the same news).
  let startingUp = true;
  const interrupts = abortOnSignals((signal) => {
    progress.finish();
    const what = startingUp ? 'stopping the start-up and everything it launched; nothing was measured' : 'stopping, and writing what was measured';
    process.stderr.write(`servelab: ${signal} received: ${what} (press Ctrl-C again to quit at once)\n`);
  });
  const onProgress = (update: RunProgress): void => {
    if (update.phase !== 'starting') startingUp = false;
    progress.update(update);
  };
  try {
    if (test.config.repeats > 1) {
      const series = await test.runRepeats({
        signal: interrupts.signal,
        onProgress,
        onRepeatStart: (repeat, of, seed) => {
          progress.finish();
          process.stderr.write(`[repeat ${repeat}/${of}] seed ${seed}\n`);
        },
      });
      progress.finish();
      if (!test.config.quiet) process.stdout.write(formatRepeatsTable(series.combined, series.outputDirectory));
      process.stdout.write(`results: ${series.outputDirectory}\n`);
      const signal = interrupts.received();
      // A signal ends the series (in a repeat or while the next one started up): the shell's code for it.
      return signal !== undefined ? exitCodeFor(signal) : EXIT_OK;
    }
    const result = await test.run({ signal: interrupts.signal, onProgress }).catch((error: unknown) => {
      const signal = interrupts.received();
      if (signal !== undefined && isServelabError(error) && error.code === 'INTERRUPTED') throw new InterruptedStartUp(exitCodeFor(signal));
      // A full disk after the run was measured: the summary from memory still prints, then the one line about the disk.
      if (error instanceof DiskFullAfterRun && !test.config.quiet) {
        progress.finish();
        process.stdout.write(`${formatTerminalSummary(error.result.run, error.result.metrics, { color: process.stdout.isTTY === true })}\n`);
      }
      throw error;
    });
    progress.finish();
    if (!test.config.quiet) process.stdout.write(`${formatTerminalSummary(result.run, result.metrics, { color: process.stdout.isTTY === true })}\n`);
    process.stdout.write(`results: ${result.outputDirectory}\n`);
    // Interrupted by a signal: the shell's code for it. Stopped early by the run itself (onProcessExit: stop): what it
    // measured is complete and written, and the notice says why it stopped.
    const signal = interrupts.received();
    return result.status === 'interrupted' && signal !== undefined ? exitCodeFor(signal) : EXIT_OK;
  } catch (error) {
    if (error instanceof InterruptedStartUp) return error.exitCode;
    throw error;
  } finally {
    progress.finish();
    interrupts.dispose();
  }
}

/** A start-up stopped by a signal, whose one line was printed when the signal came. */
class InterruptedStartUp extends Error {
  constructor(readonly exitCode: number) {
    super('interrupted during start-up');
  }
}
