import { dirname, isAbsolute, resolve } from 'node:path';
import type { Command } from 'commander';
import { ServelabError } from '../../errors/servelab-error.js';
import { camelCaseSettings } from '../../config/snake-case-settings.js';
import { readSettingsFile } from '../read-settings-file.js';

/** Settings holding file paths: in a config file they are relative to the file, not to where servelab runs. */
const PATH_SETTINGS = ['datasetPath', 'tracePath', 'tokenizerPath', 'outputDir', 'resultsRoot', 'profile'];

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
    // A profile may be a built-in name; only values that look like files are resolved.
    if (typeof value === 'string' && !isAbsolute(value) && (key !== 'profile' || /[/\\]|\.json$/.test(value))) {
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
    .action(async (file: string, overrides: { outputDir?: string; progress?: string; quiet?: boolean }) => {
      const { test, settings } = await readTestFile(file);
      // A run's own config.json names its directory and id: a re-run gets new ones unless asked otherwise.
      if (overrides.outputDir !== undefined) {
        settings.outputDir = overrides.outputDir;
        delete settings.runId;
      }
      if (overrides.progress !== undefined) settings.progress = overrides.progress;
      if (overrides.quiet === true) settings.quiet = true;
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
