import type { Command } from 'commander';

/**
 * `npm start`: a short routing test on the embedded simulated cluster, so a fresh checkout shows within a minute, and
 * with no GPU, what servelab measures: 4 simulated Llama-3-8B servers behind the builtin cache-aware router, offered a
 * shared-prefix workload (16 system prompts, 20 questions each) as Poisson arrivals.
 */
export const demoSettings = {
  target: 'sim',
  numGpus: 4,
  router: 'builtin',
  routingPolicy: 'cache_aware',
  profile: 'llama-3-8b-h100',
  requestRate: 20,
  datasetName: 'shared-prefix',
  // The dataset makes groups × prompts per group (as SGLang's does): said here too, so the run does not note that it
  // measured other than the 1,000 --num-prompts would default to.
  numPrompts: 16 * 20,
  gspNumGroups: 16,
  gspPromptsPerGroup: 20,
  gspSystemPromptLen: 1024,
  gspQuestionLen: 64,
  gspOutputLen: 64,
  warmupRequests: 4,
  seed: 1,
} as const;

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .summary('a short routing test on the simulated cluster (what npm start runs)')
    .description(
      'A routing test on the embedded simulated cluster, to see what servelab measures with no GPU: 4 simulated Llama-3-8B/H100 servers behind the builtin cache_aware router, 320 shared-prefix requests as Poisson arrivals at 20 req/s. Writes a run directory with report.html.',
    )
    .option('--output-dir <dir>', 'the run directory (default: results/<run-id>)')
    .action(async (options: { outputDir?: string }) => {
      process.stderr.write(
        'servelab demo: 4 simulated Llama-3-8B/H100 servers behind the builtin cache_aware router; 320 shared-prefix requests, Poisson at 20 req/s (no GPU needed)\n',
      );
      const [{ RoutingTest }, { executeTest }] = await Promise.all([import('../../experiments/routing-test.js'), import('../execute-test.js')]);
      process.exitCode = await executeTest(new RoutingTest({ ...demoSettings, ...(options.outputDir === undefined ? {} : { outputDir: options.outputDir }) }));
    });
}
