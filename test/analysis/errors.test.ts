import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { fullyTracedRecord, recordAt, runOf } from './records.js';

const failure = (errorClass: 'http_5xx' | 'connect_refused' | undefined, errorMessage?: string) =>
  recordAt({ scheduledTime: 0, arrivalTime: 0.001, success: false, ...(errorClass ? { error: errorClass } : {}), ...(errorMessage ? { errorMessage } : {}) });

describe('error summary', () => {
  it('keeps per class the count and the most common message, cut to 200 characters, most frequent class first', () => {
    const long = `HTTP 503: ${'x'.repeat(300)}`;
    const run = runOf([
      fullyTracedRecord(0),
      failure('connect_refused', 'connect ECONNREFUSED 127.0.0.1:30002'),
      failure('http_5xx', 'HTTP 500: engine overloaded'),
      failure('http_5xx', long),
      failure('http_5xx', `${long}, with a different tail`),
      failure('http_5xx'),
      failure(undefined),
    ]);
    const summary = summarize(run);
    expect(summary.counts.failedByClass).toEqual({ connect_refused: 1, http_5xx: 4, unknown: 1 });
    expect(summary.errors.map((error) => [error.class, error.count])).toEqual([
      ['http_5xx', 4],
      ['connect_refused', 1],
      ['unknown', 1],
    ]);
    const http = summary.errors[0];
    // The two long messages differ only after character 200: the same message once cut.
    expect(http?.topMessage).toBe(long.slice(0, 200));
    expect(http?.topMessageCount).toBe(2);
    expect(summary.errors[1]).toEqual({ class: 'connect_refused', count: 1, topMessage: 'connect ECONNREFUSED 127.0.0.1:30002', topMessageCount: 1 });
    expect(summary.errors[2]).toEqual({ class: 'unknown', count: 1, topMessage: null, topMessageCount: 0 });
  });

  it('is empty when nothing failed', () => {
    expect(summarize(runOf([fullyTracedRecord(0)])).errors).toEqual([]);
  });
});
