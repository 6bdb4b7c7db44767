import { describe, expect, it } from 'vitest';
import { linearScale, type LinearScaleOptions } from '../../../src/report/charts/svg/linear-scale.js';

const scale = (extent: LinearScaleOptions['extent'], includeZero = false, extra: Partial<LinearScaleOptions> = {}) =>
  linearScale({ extent, includeZero, rangeStartPx: 0, rangeEndPx: 600, tickIntervals: 6, ...extra });

/** What every axis must satisfy: ticks evenly spaced over the whole domain, distinct labels, a readable count. */
function expectNiceAxis(result: ReturnType<typeof scale>, low: number, high: number): void {
  const values = result.ticks.map((tick) => tick.value);
  expect(result.domain[0]).toBeLessThanOrEqual(low);
  expect(result.domain[1]).toBeGreaterThanOrEqual(high);
  expect(result.domain[1]).toBeGreaterThan(result.domain[0]);
  expect(values[0]).toBe(result.domain[0]);
  expect(values[values.length - 1]).toBe(result.domain[1]);
  expect(values.length).toBeGreaterThanOrEqual(3);
  expect(values.length).toBeLessThanOrEqual(13);
  const step = (values[1] as number) - (values[0] as number);
  for (let index = 1; index < values.length; index++) expect((values[index] as number) - (values[index - 1] as number)).toBeCloseTo(step, 12);
  const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
  expect([1, 2, 5].some((nice) => Math.abs(mantissa - nice) < 1e-9)).toBe(true);
  const labels = result.ticks.map((tick) => tick.label);
  expect(new Set(labels).size).toBe(labels.length);
  for (const label of labels) expect(label).not.toMatch(/NaN|Infinity|0000000|9999999/);
  expect(result.position(result.domain[0])).toBe(0);
  expect(result.position(result.domain[1])).toBeCloseTo(600, 9);
}

describe('linear scale and nice ticks', () => {
  it('0.0013 to 0.27: steps of 0.05 from 0 to 0.3, two decimals', () => {
    const result = scale([0.0013, 0.27]);
    expectNiceAxis(result, 0.0013, 0.27);
    expect(result.ticks.map((tick) => tick.label)).toEqual(['0.00', '0.05', '0.10', '0.15', '0.20', '0.25', '0.30']);
  });

  it('0 to 1: steps of 0.2, and 0.6 prints as 0.6', () => {
    const result = scale([0, 1]);
    expectNiceAxis(result, 0, 1);
    expect(result.ticks.map((tick) => tick.label)).toEqual(['0.0', '0.2', '0.4', '0.6', '0.8', '1.0']);
  });

  it('3 to 3: a span around the single value, or from zero when the axis includes it', () => {
    const alone = scale([3, 3]);
    expectNiceAxis(alone, 3, 3);
    expect(alone.domain[0]).toBeLessThan(3);
    expect(alone.domain[1]).toBeGreaterThan(3);
    const fromZero = scale([3, 3], true);
    expectNiceAxis(fromZero, 0, 3);
    expect(fromZero.domain).toEqual([0, 3]);
    expectNiceAxis(scale([0, 0]), 0, 0);
    expectNiceAxis(scale([-2, -2]), -2, -2);
  });

  it('1e-6 to 2e3: whole hundreds with thousands grouped', () => {
    const result = scale([1e-6, 2e3]);
    expectNiceAxis(result, 1e-6, 2e3);
    expect(result.ticks.map((tick) => tick.label)).toEqual(['0', '500', '1,000', '1,500', '2,000']);
  });

  it('very small and very large spans, negative values, no data', () => {
    const tiny = scale([1.2e-9, 3.4e-9]);
    expectNiceAxis(tiny, 1.2e-9, 3.4e-9);
    expect(tiny.ticks[1]?.label).toMatch(/e−9$/);
    expectNiceAxis(scale([2e9, 7e9]), 2e9, 7e9);
    const negative = scale([-37, 12]);
    expectNiceAxis(negative, -37, 12);
    expect(negative.ticks[0]?.label).toBe('−40');
    const empty = scale(undefined);
    expectNiceAxis(empty, 0, 1);
  });

  it('keeps a fixed domain as given, with the ticks inside it', () => {
    const result = scale([0.2, 0.4], false, { fixedDomain: [0, 1] });
    expect(result.domain).toEqual([0, 1]);
    expect(result.ticks.map((tick) => tick.value)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
  });

  it('runs a y axis from the bottom up', () => {
    const result = linearScale({ extent: [0, 10], includeZero: true, rangeStartPx: 200, rangeEndPx: 0, tickIntervals: 5 });
    expect(result.position(0)).toBe(200);
    expect(result.position(10)).toBe(0);
  });
});
