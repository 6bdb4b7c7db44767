import type { Command } from 'commander';

/**
 * `npm start`: a short test on the embedded simulated engine, so a fresh checkout shows what servelab measures within
 * a minute and with no GPU.
 */
export const demoSettings = {
  target: 'sim',
  profile: 'llama-3-8b-h100',
  requestRate: 20,
  numPrompts: 300,
  datasetName: 'random',
  randomInputLen: 1024,
  randomOutputLen: 128,
  randomRangeRatio: 0.5,
  seed: 1,
} as const;

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .summary('a short node test on the simulated engine (what npm start runs)')
    .option('--output-dir <dir>', 'the run directory (default: results/<run-id>)')
    .action(async (options: { outputDir?: string }) => {
      process.stderr.write('servelab demo: a node test of a simulated Llama-3-8B on an H100 (no GPU needed): 300 requests, Poisson at 20 req/s\n');
      const [{ NodeTest }, { executeTest }] = await Promise.all([import('../../orchestration/node-test.js'), import('../execute-test.js')]);
      process.exitCode = await executeTest(new NodeTest({ ...demoSettings, ...(options.outputDir === undefined ? {} : { outputDir: options.outputDir }) }));
    });
}
