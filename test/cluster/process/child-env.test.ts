import { afterEach, describe, expect, it } from 'vitest';
import { childEnv, withholdFromChildren } from '../../../src/cluster/process/child-env.js';
import { SupervisedProcess } from '../../../src/cluster/process/supervised-process.js';

const saved = { ...process.env };
afterEach(() => {
  for (const name of ['OPENAI_API_KEY', 'MY_SERVING_KEY']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe('the API key never reaches a child process (issue 11)', () => {
  it('is left out of the environment a launched process gets, also under a custom apiKeyEnv', async () => {
    process.env['OPENAI_API_KEY'] = 'sk-secret-default';
    process.env['MY_SERVING_KEY'] = 'sk-secret-custom';
    withholdFromChildren('MY_SERVING_KEY');
    expect(childEnv()['OPENAI_API_KEY']).toBeUndefined();
    expect(childEnv({ EXTRA: '1' })['EXTRA']).toBe('1');
    // A real child, as servers, routers and taps are started.
    const child = new SupervisedProcess({
      name: 'env-probe',
      command: process.execPath,
      args: ['-e', 'console.log(`seen: ${process.env.OPENAI_API_KEY ?? "none"} ${process.env.MY_SERVING_KEY ?? "none"} ${process.env.PATH ? "path" : "nopath"}`)'],
    });
    const [line] = await child.waitForLine(/^seen: .*$/, 10_000, 'print its environment');
    await child.stop();
    expect(line).toBe('seen: none none path');
  });
});
