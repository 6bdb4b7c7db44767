import { describe, expect, it } from 'vitest';
import { checkMachineCapacity } from '../../src/config/machine-capacity.js';

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
