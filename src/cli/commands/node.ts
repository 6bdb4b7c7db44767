import type { Command } from 'commander';
import { addDryRunOption, submitOrDryRun } from '../submit-job.js';
import { slurmJobFlags } from '../options/slurm-job-flags.js';
import { addFlags, flagsToConfig } from '../options/option-table.js';
import { nodeTestFlags } from '../options/node-test-flags.js';

export function registerNodeCommand(program: Command): void {
  const command = program
    .command('node')
    .summary('node test: load one server and record every request\'s lifecycle')
    .description(
      [
        'Node test: one server (one GPU or one TP group). Requests go straight to the server as an open-loop arrival',
        'process; each request\'s lifecycle is recorded (client times, and SGLang\'s server timing keys), and the run',
        'directory gets requests.csv, requests.jsonl, summary.json and config.json.',
      ].join(' '),
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  servelab node --request-rate 50 --num-prompts 500 --random-input-len 512 --random-output-len 128',
        '  servelab node --target sglang --model-path meta-llama/Meta-Llama-3-8B-Instruct --gpu-id 0 --request-rate 8',
        '  servelab node --target attach --url http://127.0.0.1:30000 --dataset-name sharegpt --dataset-path sharegpt.json',
      ].join('\n'),
    );
  const flags = [...nodeTestFlags, ...slurmJobFlags];
  addFlags(command, flags);
  addDryRunOption(command);
  command.action(async () => {
    const settings = flagsToConfig(command, flags);
    const submitted = await submitOrDryRun('node', settings, command.opts<{ dryRun?: boolean }>().dryRun === true);
    if (submitted !== undefined) {
      process.exitCode = submitted;
      return;
    }
    // Loaded on use, so that commands launched many times (sim-server, router, taps) start fast.
    const [{ NodeTest }, { executeTest }] = await Promise.all([import('../../experiments/node-test.js'), import('../execute-test.js')]);
    process.exitCode = await executeTest(new NodeTest(settings));
  });
}
