import { describe, expect, it } from 'vitest';
import { describeValidation, type ValidationResult, type ValidationRow } from '../../src/experiments/validate-profiles.js';

/** A validation row whose metrics are all within 2% but TTFT p90, with the given client and server TTFT p90 errors. */
function row(requestRate: number, clientTtftP90ErrorPercent: number, serverTtftP90ErrorPercent: number): ValidationRow {
  const keys = ['throughputErrorPercent', 'ttftP50ErrorPercent', 'ttftP90ErrorPercent', 'tpotP50ErrorPercent', 'e2eP50ErrorPercent', 'e2eP90ErrorPercent'] as const;
  return {
    requestRate,
    serverTtftP90ErrorPercent,
    metrics: keys.map((key) => ({ key, name: key, real: 100, twin: 100 + (key === 'ttftP90ErrorPercent' ? clientTtftP90ErrorPercent : 1.5), errorPercent: key === 'ttftP90ErrorPercent' ? clientTtftP90ErrorPercent : 1.5 })),
  };
}

function result(rows: ValidationRow[]): ValidationResult {
  return {
    predictedCapacity: 26.7,
    rates: rows.map((candidate) => candidate.requestRate),
    recommended: 'measured',
    forecastSeconds: 50,
    profiles: [{ label: 'measured', rows, validation: { description: 'test', rates: [], worstErrorPercent: 31.5, rmsErrorPercent: 9.2 } }],
  };
}

describe('describeValidation', () => {
  // A sim-server black box on a loaded host (bench/twin-engines.ts): client TTFT p90 -31.5% at 0.2x with the server's
  // own TTFT p90 within 3%. Printed without the server side, that read as the engine model's miss.
  it("prints the server's TTFT p90 beside the client's and names a miss that is only the client's path", () => {
    const lines = describeValidation(result([row(5.34, -31.5, -2.9), row(21.4, -0.3, +0.5)]));
    expect(lines).toContain('    server TTFT p90 (queue entry to first token; not in the target): -2.9% at 5.34 req/s, +0.5% at 21.4 req/s');
    const path = lines.filter((line) => line.includes('the path between server and client'));
    expect(path).toHaveLength(1);
    expect(path[0]).toMatch(/^ {4}at 5\.34 req\/s the TTFT p90 miss/);
  });

  it('does not blame the path when the server side misses too, nor print a server side the runs lack', () => {
    const engineMiss = describeValidation(result([row(5.34, -31.5, -28.0), row(21.4, +40.0, +38.0)]));
    expect(engineMiss.some((line) => line.includes('the path between server and client'))).toBe(false);
    const noServerTiming = describeValidation(result([row(5.34, -31.5, Number.NaN), row(21.4, -0.3, Number.NaN)]));
    expect(noServerTiming.some((line) => line.includes('server TTFT p90'))).toBe(false);
  });
});
