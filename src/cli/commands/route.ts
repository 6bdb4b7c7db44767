import type { Command } from 'commander';
import { addDryRunOption, submitOrDryRun } from '../submit-job.js';
import { slurmJobFlags } from '../options/slurm-job-flags.js';
import { addFlags, flagsToConfig } from '../options/option-table.js';
import { routingTestFlags } from '../options/routing-test-flags.js';

export function registerRouteCommand(program: Command): void {
  const command = program
    .command('route')
    .summary('routing test: load a router in front of N servers and trace where each request went')
    .description(
      [
        'Routing test: one router in front of N servers. Requests go to the router at the total arrival rate; a tracing',
        'tap in front of each server records when the router forwarded each request and which server took it. Writes',
        'requests.csv (router_send_time, host), nodes.csv (per-node share, latencies, cache hits) and summary.json.',
      ].join(' '),
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  servelab route --num-gpus 4 --routing-policy cache_aware --dataset-name shared-prefix --request-rate 40',
        '  servelab route --router nginx --routing-policy least_conn --num-gpus 2 --request-rate 20',
        '  servelab route --num-gpus 3 --failure-schedule \'{"2": [1], "5": []}\' --request-rate 30 --num-prompts 300',
        '  servelab route --target sglang --model-path meta-llama/Meta-Llama-3-8B-Instruct --num-gpus 8 --router sglang-router',
        '  servelab route --pd-disaggregation --num-prefill 2 --num-decode 2 --prefill-policy cache_aware --decode-policy round_robin',
        '  servelab route --target sglang --model-path meta-llama/Meta-Llama-3-8B-Instruct --pd-disaggregation --num-prefill 2 --num-decode 6 --router smg',
        '  servelab route --target attach --pd-disaggregation --prefill-url http://10.0.0.1:30000,8998 --decode-url http://10.0.0.2:30000 --router smg',
      ].join('\n'),
    );
  const flags = [...routingTestFlags, ...slurmJobFlags];
  addFlags(command, flags);
  addDryRunOption(command);
  command.action(async () => {
    const settings = flagsToConfig(command, flags);
    const submitted = await submitOrDryRun('routing', settings, command.opts<{ dryRun?: boolean }>().dryRun === true);
    if (submitted !== undefined) {
      process.exitCode = submitted;
      return;
    }
    const [{ RoutingTest }, { executeTest }] = await Promise.all([import('../../experiments/routing-test.js'), import('../execute-test.js')]);
    process.exitCode = await executeTest(new RoutingTest(settings));
  });
}
