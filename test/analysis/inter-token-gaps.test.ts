import { describe, expect, it } from 'vitest';
import { strideSample } from '../../src/analysis/cdf.js';
import { pooledInterTokenLatencies, sampledInterTokenLatencies } from '../../src/analysis/inter-token-gaps.js';
import { recordAt } from './records.js';

describe('sampledInterTokenLatencies', () => {
  const records = [
    recordAt({ success: true, interTokenLatencies: [0.01, 0.02, 0.03, 0.04] }),
    recordAt({ success: false, error: 'http_5xx', interTokenLatencies: [9, 9] }),
    recordAt({ success: true }),
    recordAt({ success: true, interTokenLatencies: [0.05, 0.06, 0.07] }),
    recordAt({ success: true, interTokenLatencies: [0.08, 0.09, 0.1, 0.11, 0.12] }),
  ];

  it('keeps every gap of the succeeded records when there are few enough, then the smallest and the largest', () => {
    expect([...sampledInterTokenLatencies(records, 100)]).toEqual([...pooledInterTokenLatencies(records), 0.01, 0.12]);
  });

  it('is the stride sample of the pooled gaps, taken without pooling them, and the range of all of them', () => {
    for (const maxCount of [1, 2, 3, 5, 7, 11]) {
      const sample = [...sampledInterTokenLatencies(records, maxCount)];
      expect(sample.slice(0, -2)).toEqual(strideSample([...pooledInterTokenLatencies(records)], maxCount));
      expect(sample.slice(-2)).toEqual([0.01, 0.12]);
      expect(sample.length).toBeLessThanOrEqual(maxCount + 2);
    }
  });

  it('has nothing to sample in records without gaps', () => {
    expect(sampledInterTokenLatencies([recordAt({ success: true })], 10)).toHaveLength(0);
  });
});
