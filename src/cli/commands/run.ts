import { dirname, isAbsolute, resolve } from 'node:path';
import type { Command } from 'commander';
import { ServelabError } from '../../errors/servelab-error.js';
import { camelCaseSettings } from '../../config/snake-case-settings.js';
import { readSettingsFile } from '../read-settings-file.js';
import { submitOrDryRun } from '../submit-job.js';
import { isPathValue, PATH_SETTINGS } from '../../config/path-settings.js';

export async function readTestFile(path: string): Promise<{ test: string; settings: Record<string, unknown> }> {
  const parsed = await readSettingsFile(path, 'config file');
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ServelabError('INVALID_CONFIG', `${path} must hold a mapping of settings, e.g. "test: node" and "requestRate: 10"`);
  }
  const { test = 'node', ...given } = parsed as Record<string, unknown>;
  // The first users' snake_case names (dataset_path, request_rate, ...) as servelab's camelCase ones.
  const settings = camelCaseSettings(given);
  if (test !== 'node' && test !== 'routing') {
    throw new ServelabError('INVALID_CONFIG', `${path}: test must be "node" or "routing", not ${JSON.stringify(test)}`);
  }
  for (const key of PATH_SETTINGS) {
    const value = settings[key];
    if (typeof value === 'string' && !isAbsolute(value) && isPathValue(key, value)) {
      settings[key] = resolve(dirname(path), value);
    }
  }
  return { test, settings };
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .summary('run a test described in a YAML or JSON file')
    .description('Runs the test a YAML or JSON file describes: "test: node" or "test: routing", then the same settings as the command line, camelCase (requestRate, numPrompts, ...) or snake_case (request_rate, num_prompts, ...). Paths in the file are relative to the file.')
    .argument('<file>', 'the test file')
    .option('--output-dir <dir>', 'the run directory (overrides the file\'s outputDir)')
    .option('--progress <mode>', 'auto, bar, lines or off (overrides the file)')
    .option('--quiet', 'print no summary at the end')
    .option('--dry-run', 'with launcher: slurm outside an allocation: print the batch script that would be submitted, and exit without submitting')
    .action(async (file: string, overrides: { outputDir?: string; progress?: string; quiet?: boolean; dryRun?: boolean }) => {
      const { test, settings } = await readTestFile(file);
      // A run's own config.json names its directory and id: a re-run gets new ones unless asked otherwise.
      if (overrides.outputDir !== undefined) {
        settings.outputDir = overrides.outputDir;
        delete settings.runId;
      }
      if (overrides.progress !== undefined) settings.progress = overrides.progress;
      if (overrides.quiet === true) settings.quiet = true;
      const submitted = await submitOrDryRun(test === 'routing' ? 'routing' : 'node', settings, overrides.dryRun === true);
      if (submitted !== undefined) {
        process.exitCode = submitted;
        return;
      }
      const { executeTest } = await import('../execute-test.js');
      if (test === 'routing') {
        const { RoutingTest } = await import('../../experiments/routing-test.js');
        process.exitCode = await executeTest(new RoutingTest(settings));
        return;
      }
      const { NodeTest } = await import('../../experiments/node-test.js');
      process.exitCode = await executeTest(new NodeTest(settings));
    });
}
