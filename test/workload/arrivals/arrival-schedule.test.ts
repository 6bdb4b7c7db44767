import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServelabError } from '../../../src/errors/servelab-error.js';
import { createArrivalSchedule } from '../../../src/workload/arrivals/arrival-registry.js';
import { SeededRandom } from '../../../src/utils/random.js';

function gapsSeconds(offsetsMs: Float64Array): number[] {
  const gaps: number[] = [];
  for (let index = 1; index < offsetsMs.length; index++) gaps.push(((offsetsMs[index] as number) - (offsetsMs[index - 1] as number)) / 1000);
  return gaps;
}

function meanAndCv(values: number[]): { mean: number; cv: number } {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1);
  return { mean, cv: Math.sqrt(variance) / mean };
}

/** Kolmogorov–Smirnov distance between the sample and the exponential distribution with the given rate. */
function ksDistanceToExponential(samples: number[], rate: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  let distance = 0;
  sorted.forEach((value, index) => {
    const cdf = 1 - Math.exp(-rate * value);
    distance = Math.max(distance, Math.abs((index + 1) / sorted.length - cdf), Math.abs(cdf - index / sorted.length));
  });
  return distance;
}

describe('createArrivalSchedule', () => {
  it('poisson: exponential gaps pass a Kolmogorov–Smirnov test and the mean rate matches', () => {
    const rate = 200;
    const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: rate }, 20_001, new SeededRandom(7));
    expect(offsetsMs[0]).toBe(0);
    const gaps = gapsSeconds(offsetsMs);
    // 1% critical value of the one-sample KS statistic: 1.63 / sqrt(n).
    expect(ksDistanceToExponential(gaps, rate)).toBeLessThan(1.63 / Math.sqrt(gaps.length));
    // And a clearly wrong rate is rejected by the same test, so the test has power.
    expect(ksDistanceToExponential(gaps, rate * 1.1)).toBeGreaterThan(1.63 / Math.sqrt(gaps.length));
    const achievedRate = (offsetsMs.length - 1) / ((offsetsMs[offsetsMs.length - 1] as number) / 1000);
    expect(achievedRate).toBeGreaterThan(rate * 0.98);
    expect(achievedRate).toBeLessThan(rate * 1.02);
    expect(meanAndCv(gaps).cv).toBeCloseTo(1, 1);
  });

  it.each([20, 100, 200, 500])('poisson by default: %s arrivals are scheduled at exactly the target rate', (count) => {
    const rate = 10;
    const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: rate }, count, new SeededRandom(1));
    const scheduledRate = (count - 1) / (((offsetsMs[count - 1] as number) - (offsetsMs[0] as number)) / 1000);
    expect(scheduledRate).toBeCloseTo(rate, 9);
    for (let index = 1; index < count; index++) expect(offsetsMs[index]).toBeGreaterThanOrEqual(offsetsMs[index - 1] as number);
  });

  it('poisson conditioned: the instants between the ends are sorted uniforms, and the gaps stay exponential', () => {
    const rate = 200;
    const count = 20_001;
    const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: rate, draw: 'conditioned' }, count, new SeededRandom(7));
    const spanMs = ((count - 1) * 1000) / rate;
    expect(offsetsMs[count - 1]).toBe(spanMs);
    const gaps = gapsSeconds(offsetsMs);
    const critical = 1.63 / Math.sqrt(gaps.length);
    expect(ksDistanceToExponential(gaps, rate)).toBeLessThan(critical);
    expect(ksDistanceToExponential(gaps, rate * 1.1)).toBeGreaterThan(critical);
    // The inner instants against the uniform law on the span, over 100 seeds: the KS statistic exceeds its 5% critical
    // value (1.36 / sqrt(n)) in about 5 of them by chance; a schedule that is not uniform exceeds it in most.
    let exceeding = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const schedule = createArrivalSchedule({ process: 'poisson', requestRate: rate }, 2001, new SeededRandom(seed));
      const scheduleSpanMs = schedule[2000] as number;
      const inner = Array.from(schedule.subarray(1, 2000), (offsetMs) => offsetMs / scheduleSpanMs);
      let distance = 0;
      inner.forEach((value, index) => {
        distance = Math.max(distance, Math.abs((index + 1) / inner.length - value), Math.abs(value - index / inner.length));
      });
      if (distance > 1.36 / Math.sqrt(inner.length)) exceeding++;
    }
    expect(exceeding).toBeLessThan(12);
  });

  it('poisson independent: the i.i.d. sum of exponential gaps drawn from the seed, as bench_serving draws it', () => {
    const rate = 10;
    const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: rate, draw: 'independent' }, 20, new SeededRandom(1));
    const random = new SeededRandom(1);
    let expectedMs = 0;
    expect(offsetsMs[0]).toBe(0);
    for (let index = 1; index < 20; index++) {
      expectedMs += random.exponential(rate) * 1000;
      expect(offsetsMs[index]).toBe(expectedMs);
    }
    // The same gaps, conditioned: the same shape, rescaled onto the exact span.
    const conditioned = createArrivalSchedule({ process: 'poisson', requestRate: rate }, 20, new SeededRandom(1));
    const scale = (conditioned[19] as number) / (offsetsMs[19] as number);
    for (let index = 1; index < 19; index++) expect(conditioned[index]).toBeCloseTo((offsetsMs[index] as number) * scale, 9);
  });

  it('gamma conditioned: the rate is exact and the gaps\' CV is sqrt((n − 2) / ((n − 1)·k + 1))', () => {
    const rate = 100;
    for (const [count, burstiness] of [[50, 0.25], [50, 4], [2001, 0.5]] as const) {
      let cvSum = 0;
      const repeats = 400;
      for (let seed = 1; seed <= repeats; seed++) {
        const offsetsMs = createArrivalSchedule({ process: 'gamma', requestRate: rate, burstiness }, count, new SeededRandom(seed));
        expect(((count - 1) * 1000) / (offsetsMs[count - 1] as number)).toBeCloseTo(rate, 9);
        const gaps = gapsSeconds(offsetsMs);
        const mean = 1 / rate;
        cvSum += Math.sqrt(gaps.reduce((sum, gap) => sum + (gap - mean) ** 2, 0) / gaps.length) / mean;
      }
      const expectedCv = Math.sqrt((count - 2) / ((count - 1) * burstiness + 1));
      expect(Math.abs(cvSum / repeats - expectedCv) / expectedCv).toBeLessThan(0.06);
    }
  });

  it('refuses an unknown draw', () => {
    expect(() => createArrivalSchedule({ process: 'poisson', requestRate: 1, draw: 'sorted' as 'conditioned' }, 3, new SeededRandom(1))).toThrow(/draw must be/);
  });

  it('is absolute and non-decreasing, and reproducible from the seed', () => {
    const first = createArrivalSchedule({ process: 'poisson', requestRate: 50 }, 1000, new SeededRandom(3));
    const again = createArrivalSchedule({ process: 'poisson', requestRate: 50 }, 1000, new SeededRandom(3));
    const other = createArrivalSchedule({ process: 'poisson', requestRate: 50 }, 1000, new SeededRandom(4));
    expect(Array.from(again)).toEqual(Array.from(first));
    expect(Array.from(other)).not.toEqual(Array.from(first));
    for (let index = 1; index < first.length; index++) expect(first[index]).toBeGreaterThanOrEqual(first[index - 1] as number);
  });

  it('100 requests at 50 req/s spread over about 2 s', () => {
    const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: 50 }, 100, new SeededRandom(1));
    const spanS = (offsetsMs[99] as number) / 1000;
    expect(spanS).toBeGreaterThan(1.4);
    expect(spanS).toBeLessThan(2.6);
  });

  it.each([0.25, 1, 4])('gamma with burstiness %s keeps the rate and has CV 1/sqrt(burstiness)', (burstiness) => {
    const rate = 100;
    const offsetsMs = createArrivalSchedule({ process: 'gamma', requestRate: rate, burstiness }, 40_001, new SeededRandom(11));
    const { mean, cv } = meanAndCv(gapsSeconds(offsetsMs));
    expect(mean * rate).toBeGreaterThan(0.97);
    expect(mean * rate).toBeLessThan(1.03);
    const expectedCv = 1 / Math.sqrt(burstiness);
    expect(Math.abs(cv - expectedCv) / expectedCv).toBeLessThan(0.05);
  });

  it('constant: every gap is 1 / rate', () => {
    const offsetsMs = createArrivalSchedule({ process: 'constant', requestRate: 400 }, 1000, new SeededRandom(1));
    for (const gap of gapsSeconds(offsetsMs)) expect(gap).toBeCloseTo(0.0025, 12);
    expect(offsetsMs[999]).toBeCloseTo(999 * 2.5, 9);
  });

  it.each(['poisson', 'gamma', 'constant'])('%s with an infinite rate puts every request at 0', (process) => {
    const offsetsMs = createArrivalSchedule({ process, requestRate: Infinity, burstiness: 0.5 }, 50, new SeededRandom(1));
    expect(offsetsMs).toHaveLength(50);
    expect(Array.from(offsetsMs).every((offset) => offset === 0)).toBe(true);
  });

  it('rejects impossible settings with INVALID_CONFIG', () => {
    const random = new SeededRandom(1);
    for (const settings of [
      { process: 'poisson', requestRate: 0 },
      { process: 'poisson', requestRate: -5 },
      { process: 'poisson', requestRate: Number.NaN },
      { process: 'gamma', requestRate: 10, burstiness: 0 },
      { process: 'no-such-process', requestRate: 10 },
    ]) {
      expect(() => createArrivalSchedule(settings, 10, random)).toThrow(ServelabError);
    }
    expect(() => createArrivalSchedule({ process: 'poisson', requestRate: 1 }, -1, random)).toThrow(/whole number/);
  });

  describe('trace', () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-trace-'));

    it('replays timestamps relative to the first, scaled by traceTimeScale', () => {
      const path = join(directory, 'arrivals.txt');
      writeFileSync(path, '# epoch seconds\n1700000000.0\n1700000000.5\n\n1700000002.0\n1700000002.0\n');
      const offsetsMs = createArrivalSchedule({ process: 'trace', requestRate: 1, tracePath: path, traceTimeScale: 2 }, 3, new SeededRandom(1));
      expect(Array.from(offsetsMs)).toEqual([0, 1000, 4000]);
    });

    it('reads JSONL rows and CSV with a header', () => {
      const jsonPath = join(directory, 'arrivals.jsonl');
      writeFileSync(jsonPath, '{"timestamp_ms": 100, "input_length": 5}\n{"timestamp_ms": 350}\n');
      expect(Array.from(createArrivalSchedule({ process: 'trace', requestRate: 1, tracePath: jsonPath }, 2, new SeededRandom(1)))).toEqual([0, 250]);
      const csvPath = join(directory, 'arrivals.csv');
      writeFileSync(csvPath, 'timestamp,prompt_tokens\n0.25,10\n1.25,20\n');
      expect(Array.from(createArrivalSchedule({ process: 'trace', requestRate: 1, tracePath: csvPath }, 2, new SeededRandom(1)))).toEqual([0, 1000]);
    });

    it('names the file and line of a malformed or unsorted timestamp', () => {
      const path = join(directory, 'broken.txt');
      writeFileSync(path, '1\n2\nsoon\n');
      expect(() => createArrivalSchedule({ process: 'trace', requestRate: 1, tracePath: path }, 2, new SeededRandom(1))).toThrow(
        /broken\.txt, line 3: "soon" is not a number/,
      );
      writeFileSync(path, '1\n3\n2\n');
      expect(() => createArrivalSchedule({ process: 'trace', requestRate: 1, tracePath: path }, 2, new SeededRandom(1))).toThrow(
        /line 3: the timestamp is earlier than the previous one/,
      );
    });

    it('rejects a missing file and a trace shorter than the workload', () => {
      expect(() =>
        createArrivalSchedule({ process: 'trace', requestRate: 1, tracePath: join(directory, 'missing.txt') }, 2, new SeededRandom(1)),
      ).toThrow(expect.objectContaining({ code: 'FILE_NOT_FOUND' }));
      const path = join(directory, 'short.txt');
      writeFileSync(path, '1\n2\n');
      expect(() => createArrivalSchedule({ process: 'trace', requestRate: 1, tracePath: path }, 5, new SeededRandom(1))).toThrow(
        /holds 2 arrivals but 5 requests/,
      );
    });
  });
});

describe('arrival process modules', () => {
  it('loads a process from a module path, and rejects one that breaks the contract', async () => {
    const { mkdtempSync: makeDirectory, writeFileSync: write } = await import('node:fs');
    const { resolveArrivalProcess } = await import('../../../src/workload/arrivals/arrival-registry.js');
    const directory = makeDirectory(join(tmpdir(), 'servelab-arrival-module-'));
    const good = join(directory, 'every-second.mjs');
    write(good, 'export const arrivalProcess = { name: "every-second", createOffsetsMs: (settings, count) => Float64Array.from({ length: count }, (_, i) => i * 1000) };\n');
    const process = await resolveArrivalProcess(good);
    expect(Array.from(createArrivalSchedule({ process: good, requestRate: 1 }, 3, new SeededRandom(1), process))).toEqual([0, 1000, 2000]);
    const backwards = join(directory, 'backwards.mjs');
    write(backwards, 'export default { name: "backwards", createOffsetsMs: (settings, count) => Float64Array.from({ length: count }, (_, i) => -i) };\n');
    expect(() => createArrivalSchedule({ process: backwards, requestRate: 1 }, 3, new SeededRandom(1), undefined)).toThrow(/unknown arrival process/);
    const loaded = await resolveArrivalProcess(backwards);
    expect(() => createArrivalSchedule({ process: backwards, requestRate: 1 }, 3, new SeededRandom(1), loaded)).toThrow(/decreasing schedule/);
    await expect(resolveArrivalProcess(join(directory, 'missing.mjs'))).rejects.toMatchObject({ code: 'MODULE_LOAD_FAILED' });
    const empty = join(directory, 'empty.mjs');
    write(empty, 'export const nothing = 1;\n');
    await expect(resolveArrivalProcess(empty)).rejects.toThrow(/exports no arrival process/);
  });
});
