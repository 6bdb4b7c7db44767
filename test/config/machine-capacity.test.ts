import { describe, expect, it } from 'vitest';
import { checkClientWorkers, checkMachineCapacity, checkServerCount, currentMachine, parseSoftLimits } from '../../src/config/machine-capacity.js';
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
    const roomy = { totalMemoryBytes: 24 * GIB, cores: 64 };
    expect(() => checkServerCount(100_000, 'sim', roomy)).toThrow(/^numGpus \(--num-gpus\) 100000 .*enough for at most 614/);
    expect(() => checkServerCount(64, 'sim', roomy)).not.toThrow();
    expect(() => checkServerCount(100_000, 'sglang', roomy)).not.toThrow();
  });

  it('more simulated servers than the cores carry are refused, naming the cores and the rule', () => {
    const twoCores = { totalMemoryBytes: 24 * GIB, cores: 2 };
    expect(() => checkServerCount(600, 'sim', twoCores)).toThrow(/^numGpus \(--num-gpus\) 600 simulated servers need more CPU than this machine's 2 cores give: at most 32 \(16 per core\)/);
    expect(() => checkServerCount(24, 'sim', twoCores)).not.toThrow();
    expect(() => checkServerCount(33, 'sim', twoCores)).toThrow(/at most 32/);
  });

  it('the open-files and process limits bound them too, named as the ulimit setting to raise', () => {
    const machine = { totalMemoryBytes: 24 * GIB, cores: 64, openFilesLimit: 1024, processesLimit: 4096 };
    // (1024 - 256 reserved) / 8 descriptors each = 96.
    expect(() => checkServerCount(100, 'sim', machine)).toThrow(/open-files limit \(ulimit -n\) is 1024, enough for at most 96 \(raise it with ulimit -n\)/);
    expect(() => checkServerCount(96, 'sim', machine)).not.toThrow();
    // 600 threads / 12 each = 50.
    expect(() => checkServerCount(60, 'sim', { ...machine, openFilesLimit: 65536, processesLimit: 600 })).toThrow(/process limit \(ulimit -u\) is 600, enough for at most 50/);
  });

  it('reads the soft limits from /proc/self/limits, leaving "unlimited" out', () => {
    const text = [
      'Limit                     Soft Limit           Hard Limit           Units',
      'Max processes             96365                96365                processes',
      'Max open files            1024                 1048576              files',
    ].join('\n');
    expect(parseSoftLimits(text)).toEqual({ openFiles: 1024, processes: 96365 });
    expect(parseSoftLimits('Max processes             unlimited            unlimited            processes')).toEqual({});
    expect(currentMachine(text)).toMatchObject({ openFilesLimit: 1024, processesLimit: 96365 });
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
