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

function result(rows: ValidationRow[]): Parameters<typeof describeValidation>[0] & Omit<ValidationResult, 'realRuns' | 'compare'> {
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

describe("describeValidation weighs the server run's own noise", () => {
  const noise = (lowPercent: number, highPercent: number) => ({ low: 100 * (1 + lowPercent / 100), high: 100 * (1 + highPercent / 100), lowPercent, highPercent });
  /** A row (real 100 on every metric) with TTFT p90 `ttftP90ErrorPercent` off; the latencies carry the intervals given. */
  function noisyRow(requestRate: number, ttftP90ErrorPercent: number, throughputErrorPercent = 1.5): ValidationRow {
    const base = row(requestRate, ttftP90ErrorPercent, Number.NaN);
    const intervals: Record<string, ReturnType<typeof noise>> = {
      ttftP50ErrorPercent: noise(-7.2, 5.1),
      ttftP90ErrorPercent: noise(-20, 13.7),
      tpotP50ErrorPercent: noise(-0.6, 0.9),
      e2eP50ErrorPercent: noise(-3, 4),
      e2eP90ErrorPercent: noise(-6, 8),
    };
    return {
      ...base,
      metrics: base.metrics.map((metric) => {
        const errorPercent = metric.key === 'throughputErrorPercent' ? throughputErrorPercent : metric.errorPercent;
        const interval = intervals[metric.key];
        const name = metric.key.replace('ErrorPercent', '').replace(/^(ttft|tpot|e2e)(P\d+)$/, (_, what: string, percentile: string) => `${what.toUpperCase()} ${percentile.toLowerCase()}`);
        return { ...metric, name, errorPercent, twin: 100 + errorPercent, ...(interval === undefined ? {} : { noise: interval }) };
      }),
    };
  }

  // A GPU engine at 137 requests: the real TTFT p90 +-13.7%, a twin -18.8% off it within that, TPOT p50 +-1%.
  it('marks a figure outside the target within the noise, says so in the worst line and prints the noise of that rate only', () => {
    const lines = describeValidation(result([noisyRow(1.3, -18.8), noisyRow(5.2, -2)]));
    expect(lines.find((line) => line.trimStart().startsWith('1.3 '))).toContain('-18.8%~');
    expect(lines).toContain("    worst 31.5% (outside the target: 1 figure, within the run's own noise (~)), RMS 9.2%");
    expect(lines).toContain("    server's own noise at 1.3 req/s (95%, over its requests): TTFT p50 -7%/+5%, TTFT p90 -20%/+14%, TPOT p50 -0.6%/+0.9%, E2E p50 -3%/+4%, E2E p90 -6%/+8%");
    expect(lines.filter((line) => line.includes("server's own noise"))).toHaveLength(1);
  });

  it('counts misses apart: outside the interval, or on throughput (which has none)', () => {
    const lines = describeValidation(result([noisyRow(1.3, -18.8, -16), noisyRow(5.2, +25)]));
    expect(lines.find((line) => line.trimStart().startsWith('1.3 '))).toMatch(/-16\.0%! +.*-18\.8%~/);
    expect(lines.find((line) => line.trimStart().startsWith('5.2 '))).toContain('+25.0%!');
    expect(lines).toContain("    worst 31.5% (outside the target: 3 figures, 1 within the runs' own noise (~), 2 not (!)), RMS 9.2%");
    expect(lines.filter((line) => line.includes("server's own noise"))).toHaveLength(2);
  });

  it('prints no noise line where every figure is within the target', () => {
    const lines = describeValidation(result([noisyRow(1.3, -2), noisyRow(5.2, 3)]));
    expect(lines.some((line) => line.includes('noise'))).toBe(false);
    expect(lines).toContain('    worst 31.5% (within the target), RMS 9.2%');
  });
});
