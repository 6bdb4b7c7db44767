import { describe, expect, it } from 'vitest';
import { partitionRoundRobin, splitCap } from '../../../src/load/multi-worker/partition-requests.js';
import type { WorkloadRequest } from '../../../src/types/workload.js';

function requests(count: number): WorkloadRequest[] {
  return Array.from({ length: count }, (_, index) => ({ datasetIndex: index, prompt: `p${index}`, inputLength: 1, outputLength: 1 }));
}

describe('partitionRoundRobin', () => {
  it('deals request i to worker i % n with its own offset and global index, and loses none', () => {
    const offsetsMs = Float64Array.from({ length: 7 }, (_, index) => index * 1.5);
    const shares = partitionRoundRobin(requests(7), offsetsMs, 3);
    expect(shares.map((share) => Array.from(share.requestIndices))).toEqual([
      [0, 3, 6],
      [1, 4],
      [2, 5],
    ]);
    expect(Array.from(shares[1]?.arrivalOffsetsMs ?? [])).toEqual([1.5, 6]);
    expect(shares[2]?.requests.map((request) => request.datasetIndex)).toEqual([2, 5]);
  });

  it('leaves extra workers empty when there are fewer requests than workers', () => {
    const shares = partitionRoundRobin(requests(1), new Float64Array(1), 3);
    expect(shares.map((share) => share.requests.length)).toEqual([1, 0, 0]);
  });
});

describe('splitCap', () => {
  it('splits a cap into shares that add up to it', () => {
    expect([0, 1, 2].map((worker) => splitCap(10, 3, worker))).toEqual([4, 3, 3]);
    expect([0, 1].map((worker) => splitCap(1000, 2, worker))).toEqual([500, 500]);
  });
});
