import { describe, expect, it } from 'vitest';
import { checkClientWorkers, checkMachineCapacity, checkServerCount } from '../../src/config/machine-capacity.js';
import { resolveNodeTestConfig } from '../../src/config/node-test-config.js';
import { resolveRoutingTestConfig } from '../../src/config/routing-test-config.js';

const GIB = 2 ** 30;
const base = { datasetName: 'random', randomInputLen: 512, randomOutputLen: 128 };

describe('settings far beyond what the machine can hold (issue 11)', () => {
  it('refuses them in one line that names the setting and the fix', () => {
    expect(() => checkMachineCapacity({ ...base, numPrompts: 1e9 }, 4 * GIB)).toThrow(/^numPrompts \(--num-prompts\) 1000000000 .* needs about \d+ GiB .* NODE_OPTIONS=--max-old-space-size/);
    expect(() => checkMachineCapacity({ ...base, numPrompts: 2 ** 33 }, 4 * GIB)).toThrow(/beyond the 4294967295 requests one run can hold/);
  });

  it("accepts the README's million-request virtual-time run on a 4 GiB heap", () => {
    expect(() => checkMachineCapacity({ ...base, numPrompts: 1_000_000 }, 4 * GIB)).not.toThrow();
  });
});

describe('settings that scale memory or processes (issue 29)', () => {
  it('--warmup-requests 1e9 is refused in one line naming it, before anything is drawn', () => {
    expect(() => checkMachineCapacity({ ...base, numPrompts: 1000, warmupRequests: 1e9 }, 4 * GIB)).toThrow(/--warmup-requests 1000000000 .*needs about \d+ GiB/);
  });

  it('shared-prefix: 1,000,000 turns, 100,000 x 100,000 groups and 1e9 groups are refused, naming the settings', () => {
    const sharedPrefix = { ...base, datasetName: 'shared-prefix', numPrompts: 1000 };
    expect(() => checkMachineCapacity({ ...sharedPrefix, gspNumTurns: 1_000_000 }, 4 * GIB)).toThrow(/--gsp-num-turns 1000000 .*needs about \d+ GiB/);
    expect(() => checkMachineCapacity({ ...sharedPrefix, gspNumGroups: 100_000, gspPromptsPerGroup: 100_000 }, 4 * GIB)).toThrow(
      /--gsp-num-groups 100000 x --gsp-prompts-per-group 100000 .*makes 10000000000 requests/,
    );
    expect(() => checkMachineCapacity({ ...sharedPrefix, gspNumGroups: 1e9, gspPromptsPerGroup: 1 }, 4 * GIB)).toThrow(/--gsp-num-groups 1000000000 .*needs about \d+ GiB/);
  });

  it("accepts SGLang's default shared-prefix layout with a few turns", () => {
    expect(() => checkMachineCapacity({ ...base, datasetName: 'shared-prefix', numPrompts: 1000, gspNumTurns: 4, warmupRequests: 1 }, 4 * GIB)).not.toThrow();
  });

  it('--num-gpus 100000 simulated servers is refused, naming the setting and the most this machine holds', () => {
    expect(() => checkServerCount(100_000, 'sim', 24 * GIB)).toThrow(/^numGpus \(--num-gpus\) 100000 .*enough for at most 614/);
    expect(() => checkServerCount(64, 'sim', 24 * GIB)).not.toThrow();
    expect(() => checkServerCount(100_000, 'sglang', 24 * GIB)).not.toThrow();
  });

  it('a routing test with --num-gpus 100000 on sim is refused when its configuration is resolved', () => {
    expect(() => resolveRoutingTestConfig({ numGpus: 100_000 })).toThrow(/numGpus \(--num-gpus\) 100000/);
    expect(() => resolveRoutingTestConfig({ numGpus: 100_000, virtualTime: true })).not.toThrow();
  });
});

describe('load-generator threads', () => {
  it('--client-workers beyond what memory holds is refused in one line naming it; a few per core are fine', () => {
    expect(() => checkClientWorkers(100_000, 24 * GIB)).toThrow(/^clientWorkers \(--client-workers\) 100000 threads .*enough for at most 768/);
    expect(() => checkClientWorkers(8, 24 * GIB)).not.toThrow();
    expect(() => resolveNodeTestConfig({ clientWorkers: 10_000_000 })).toThrow(/clientWorkers \(--client-workers\) 10000000/);
  });
});
