import { Command } from 'commander';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { registerRouterCommand, ROUTER_READY_PATTERN, runRouterCommand, type RouterCommandOptions } from '../../../src/cli/commands/router.js';
import { startScriptedUpstream } from '../scripted-upstream.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

function parse(args: string[]): RouterCommandOptions {
  const program = new Command().exitOverride();
  registerRouterCommand(program);
  const command = program.commands[0]!;
  command.parseOptions(args);
  return command.opts<RouterCommandOptions>();
}

describe('servelab router command', () => {
  it('parses its flags with sglang-router-like defaults', () => {
    const options = parse(['--worker-urls', 'http://a:1', 'http://b:2', '--policy', 'random', '--seed', '5']);
    expect(options).toMatchObject({ workerUrls: ['http://a:1', 'http://b:2'], policy: 'random', seed: 5, maxRetries: 4, host: '127.0.0.1' });
  });

  it('prints one ready line with its URL and routes with a custom policy module', async () => {
    const upstreams = await Promise.all([startScriptedUpstream('u0'), startScriptedUpstream('u1')]);
    for (const upstream of upstreams) closers.push(() => upstream.close());
    const example = fileURLToPath(new URL('../../../examples/custom-routing-policy/least-recently-chosen.js', import.meta.url));
    const options = parse(['--port', '0', '--policy', example, '--worker-urls', ...upstreams.map((upstream) => upstream.url)]);
    const lines: string[] = [];
    const handle = await runRouterCommand(options, (line) => lines.push(line));
    closers.push(() => handle.close());
    expect(lines).toHaveLength(1);
    expect(ROUTER_READY_PATTERN.exec(lines[0]!)?.[1]).toBe(handle.url);
    expect(handle.policy.name).toBe('least_recently_chosen');
    for (let index = 0; index < 4; index++) {
      const answer = await request(`${handle.url}/generate`, { method: 'POST', body: JSON.stringify({ text: 'x', stream: false }) });
      await answer.body.dump();
    }
    expect(upstreams.map((upstream) => upstream.seen.length)).toEqual([2, 2]);
  });
});
