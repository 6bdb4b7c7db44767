#!/usr/bin/env node
import { CommanderError } from 'commander';
import { EXIT_USAGE } from './exit-codes.js';
import { buildProgram } from './program.js';
import { reportError } from './report-error.js';

// `servelab ... | head` closes the pipe early: that is the reader's choice, not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const program = buildProgram();
try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // commander has printed its own message (or the help text); keep its verdict.
    process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
  } else {
    process.exitCode = reportError(error, process.argv.includes('--debug'));
  }
}
