import { Command } from 'commander';
import { servelabVersion } from '../utils/version.js';
import { registerCalibrateCommand } from './commands/calibrate.js';
import { registerCompareCommand } from './commands/compare.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerLoadGeneratorCommand } from './commands/load-generator.js';
import { registerNodeCommand } from './commands/node.js';
import { registerRouteCommand } from './commands/route.js';
import { registerReportCommand } from './commands/report.js';
import { registerRouterCommand } from './commands/router.js';
import { registerRunCommand } from './commands/run.js';
import { registerSimServerCommand } from './commands/sim-server.js';
import { registerSweepCommand } from './commands/sweep.js';
import { registerTapsCommand } from './commands/taps.js';

/** The whole command line; each command lives in its own file under commands/. */
export function buildProgram(): Command {
  const program = new Command('servelab')
    .description('A testing framework for LLM serving, SGLang first: node tests, routing tests, per-request lifecycle tracing.')
    .version(servelabVersion)
    .option('--debug', 'show stack traces for errors')
    // Set before any command is added: subcommands copy it, so their usage errors come back as exceptions too.
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureHelp({ sortSubcommands: false, showGlobalOptions: true })
    .addHelpText(
      'after',
      [
        '',
        'Start with:',
        '  servelab demo                      a 20-second routing test on the simulated cluster (what npm start runs)',
        '  servelab node --help               every setting of a node test',
        '  servelab sim-server --port 30000   a simulated SGLang server to point other tools at',
      ].join('\n'),
    );
  registerNodeCommand(program);
  registerRouteCommand(program);
  registerRunCommand(program);
  registerDemoCommand(program);
  registerReportCommand(program);
  registerCompareCommand(program);
  registerSweepCommand(program);
  registerCalibrateCommand(program);
  registerSimServerCommand(program);
  registerRouterCommand(program);
  registerTapsCommand(program);
  registerLoadGeneratorCommand(program);
  return program;
}
