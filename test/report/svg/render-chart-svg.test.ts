import { describe, expect, it } from 'vitest';
import { summarize } from '../../../src/analysis/summarize.js';
import type { ChartModel, Mark } from '../../../src/report/charts/chart-model.js';
import { chartDefinitions } from '../../../src/report/charts/chart-specs.js';
import { renderSvg } from '../../../src/report/charts/render-chart.js';
import { sampleRoutingRun } from '../sample-run.js';
import { xmlProblem } from './xml-well-formed.js';

const HOSTILE = `<script>alert("x")</script> & 'quoted' \u0001`;

function chartOf(marks: Mark[], overrides: Partial<ChartModel> = {}): ChartModel {
  return {
    title: 'A chart',
    plotWidthPx: 400,
    plotHeightPx: 200,
    x: { kind: 'linear', title: 'x (ms)' },
    y: { kind: 'linear', title: 'y' },
    marks,
    legends: [],
    ...overrides,
  };
}

const count = (svg: string, pattern: RegExp): number => svg.match(pattern)?.length ?? 0;
/** The paths of a group, up to its first nested group's end (the marks and the axes draw their lines first). */
const pathsOf = (svg: string, group: string): string[] =>
  [...((svg.split(`<g class="${group}"`)[1] ?? '').split('</g>')[0] ?? '').matchAll(/<path d="([^"]*)"/g)].map((match) => match[1] as string);

function expectStandalone(svg: string): void {
  expect(xmlProblem(svg)).toBeUndefined();
  const root = /^<svg ([^>]*)>/.exec(svg)?.[1] ?? '';
  expect(root).toContain('xmlns="http://www.w3.org/2000/svg"');
  const width = Number(/ width="(\d+)"/.exec(root)?.[1]);
  const height = Number(/ height="(\d+)"/.exec(root)?.[1]);
  expect(width).toBeGreaterThan(0);
  expect(height).toBeGreaterThan(0);
  expect(root).toContain(`viewBox="0 0 ${width} ${height}"`);
  expect(root).toContain('font-family="DejaVu Sans, Helvetica, Arial, sans-serif"');
  expect(svg).toContain('fill="white"');
  expect(svg).not.toMatch(/<script|href=|url\(|NaN|Infinity/i);
}

describe('SVG chart renderer', () => {
  it('draws a step-after line as horizontal then vertical moves, a plain line as straight segments, dots when asked', () => {
    const series = [{ name: 'a', colour: '#123456', xs: [0, 1, 2, 3], ys: [0, 0.5, 0.5, 1] }];
    const step = renderSvg(chartOf([{ kind: 'line', interpolation: 'step-after', strokeWidthPx: 1.5, series }]));
    expectStandalone(step);
    const [stepPath] = pathsOf(step, 'mark-line');
    // Four points, the third repeating the second's y: M, then H/V to the second point and H/V to the fourth.
    expect(stepPath).toMatch(/^M[\d.]+,[\d.]+H[\d.]+V[\d.]+H[\d.]+V[\d.]+$/);
    expect(step).toContain('stroke="#123456"');
    const plain = renderSvg(chartOf([{ kind: 'line', interpolation: 'linear', strokeWidthPx: 1.5, pointRadiusPx: 3, series }]));
    expect(pathsOf(plain, 'mark-line')[0]).toMatch(/^M[\d.]+,[\d.]+(L[\d.]+,[\d.]+){3}$/);
    expect(count(plain, /<circle /g)).toBe(4);
  });

  it('draws rules with dashes and labels: at the top, rotated along the bottom, at the end of a horizontal rule', () => {
    const svg = renderSvg(
      chartOf([
        { kind: 'rule', axis: 'x', rules: [{ value: 2, colour: '#c0392b', label: 'crash node 1' }], dashPx: [4, 3], strokeWidthPx: 1.5, labelPlacement: 'top' },
        { kind: 'rule', axis: 'x', rules: [{ value: 5, colour: '#2f6fb0', label: 'p50 5.00 ms' }], dashPx: [3, 3], strokeWidthPx: 1, labelPlacement: 'along-bottom' },
        { kind: 'rule', axis: 'y', rules: [{ value: 40, colour: '#333333', label: 'target 40 req/s' }], dashPx: [6, 3], strokeWidthPx: 1.5, labelPlacement: 'end' },
      ]),
    );
    expectStandalone(svg);
    expect(count(svg, /stroke-dasharray="4 3"/g)).toBe(1);
    expect(count(svg, /stroke-dasharray="6 3"/g)).toBe(1);
    expect(svg).toMatch(/<text transform="translate\([\d.]+,[\d.]+\) rotate\(-90\)" fill="#2f6fb0">p50 5.00 ms<\/text>/);
    expect(svg).toMatch(/<text x="[\d.]+" y="[\d.]+" fill="#c0392b">crash node 1<\/text>/);
    expect(svg).toMatch(/text-anchor="end">target 40 req\/s<\/text>/);
    // The rules' values are inside the axes: the y axis reaches 40, the x axis 5.
    expect(svg).toContain('>40</text>');
  });

  it('keeps rotated percentile labels apart and off the y axis when their rules are close together', () => {
    const rules = [0.2, 0.3, 0.5].map((value, index) => ({ value, colour: ['#111111', '#222222', '#333333'][index] as string, label: `p${index} ${value} ms` }));
    const svg = renderSvg(chartOf([{ kind: 'rule', axis: 'x', rules, dashPx: [3, 3], strokeWidthPx: 1, labelPlacement: 'along-bottom' }], { x: { kind: 'linear', title: 'x', domain: [0, 100] } }));
    expectStandalone(svg);
    const baselines = [...svg.matchAll(/<text transform="translate\(([\d.]+),[\d.]+\) rotate\(-90\)" fill=/g)].map((match) => Number(match[1]));
    expect(baselines).toHaveLength(3);
    const plotLeft = Number(/<g class="y-axis"><path d="M([\d.]+),/.exec(svg)?.[1]);
    // A rotated 10 px label's glyphs reach 8 px left of its baseline and 2.5 px right of it.
    expect((baselines[0] as number) - 8).toBeGreaterThanOrEqual(plotLeft);
    for (let index = 1; index < baselines.length; index++) expect((baselines[index] as number) - (baselines[index - 1] as number)).toBeGreaterThanOrEqual(10.5);
  });

  it('draws bars in band rows with value labels, and stacks that start where the previous one ended', () => {
    const svg = renderSvg(
      chartOf(
        [
          {
            kind: 'bar',
            bars: [
              { category: 'node a', startX: 0, endX: 10, colour: '#41ab5d', label: '40.0%' },
              { category: 'node b', startX: 0, endX: 6, colour: '#41ab5d', label: '24.0%' },
              { category: 'node b', startX: 6, endX: 15, colour: '#ff7f0e' },
            ],
          },
        ],
        { y: { kind: 'band', title: 'node', categories: ['node a', 'node b'], showLabels: true } },
      ),
    );
    expectStandalone(svg);
    const rects = [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"/g)].map((match) => match.slice(1).map(Number));
    expect(rects).toHaveLength(3);
    const [a, b1, b2] = rects as [[number, number, number, number], [number, number, number, number], [number, number, number, number]];
    expect(b1[1]).toBeGreaterThan(a[1]); // node b's row is below node a's
    expect(b2[0]).toBeCloseTo(b1[0] + b1[2], 1); // the stacked segment starts at the first one's end
    expect(b2[1]).toBe(b1[1]);
    expect(svg).toContain('>40.0%</text>');
    expect(svg).toContain('>node b</text>');
  });

  it('draws a timeline of thin bars from x to x2 without row labels when told to hide them', () => {
    const svg = renderSvg(
      chartOf(
        [
          {
            kind: 'bar',
            thicknessPx: 6,
            bars: [
              { category: '#1', startX: 0.1, endX: 0.3, colour: '#9467bd' },
              { category: '#1', startX: 0.3, endX: 0.9, colour: '#1f77b4' },
              { category: '#2', startX: 0.2, endX: 1.1, colour: '#1f77b4' },
            ],
          },
        ],
        { y: { kind: 'band', title: 'request', categories: ['#1', '#2'], showLabels: false } },
      ),
    );
    expectStandalone(svg);
    expect(count(svg, /<rect [^>]*height="6"/g)).toBe(3);
    expect(svg).not.toContain('>#1</text>');
  });

  it('writes a legend beside the plot, not over it', () => {
    const svg = renderSvg(
      chartOf([{ kind: 'line', interpolation: 'linear', strokeWidthPx: 1, series: [{ name: 'run a', colour: '#2f6fb0', xs: [0, 1], ys: [0, 1] }] }], {
        legends: [{ title: 'run', entries: [{ label: 'run a', colour: '#2f6fb0', symbol: 'line' }, { label: 'run b', colour: '#e07b1f', symbol: 'square' }] }],
      }),
    );
    expectStandalone(svg);
    const legendX = Math.min(...[...(svg.split('<g class="legend"')[1] ?? '').matchAll(/ x="([\d.]+)"/g)].map((match) => Number(match[1])));
    const plotRight = Math.max(...pathsOf(svg, 'x-axis').flatMap((d) => [...d.matchAll(/M([\d.]+),[\d.]+h([\d.]+)/g)].map((match) => Number(match[1]) + Number(match[2]))));
    expect(legendX).toBeGreaterThan(plotRight);
    expect(svg).toContain('>run b</text>');
    const width = Number(/ width="(\d+)"/.exec(svg)?.[1]);
    expect(width).toBeGreaterThan(legendX + 30);
  });

  it('escapes hostile text everywhere it appears', () => {
    const svg = renderSvg(
      chartOf(
        [
          { kind: 'bar', bars: [{ category: HOSTILE, startX: 0, endX: 1, colour: '#41ab5d', label: HOSTILE }] },
          { kind: 'rule', axis: 'x', rules: [{ value: 0.5, colour: '#c0392b', label: HOSTILE }], dashPx: [], strokeWidthPx: 1, labelPlacement: 'top' },
        ],
        {
          title: HOSTILE,
          subtitle: HOSTILE,
          x: { kind: 'linear', title: HOSTILE },
          y: { kind: 'band', title: HOSTILE, categories: [HOSTILE], showLabels: true },
          legends: [{ title: HOSTILE, entries: [{ label: HOSTILE, colour: '#41ab5d', symbol: 'square' }] }],
        },
      ),
    );
    expectStandalone(svg);
    expect(svg).not.toContain('<script');
    expect(count(svg, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &apos;quoted&apos; /g)).toBeGreaterThanOrEqual(8);
  });

  it('draws an empty chart with axes from 0 to 1, and a single point with room around it', () => {
    const empty = renderSvg(chartOf([{ kind: 'line', interpolation: 'step-after', strokeWidthPx: 1, series: [{ name: 'a', colour: '#000', xs: [], ys: [] }] }]));
    expectStandalone(empty);
    expect(empty).toContain('class="x-axis"');
    expect(empty).toContain('class="y-axis"');
    expect(empty).toContain('>1.0</text>');
    expect(pathsOf(empty, 'mark-line')).toEqual([]);
    const bands = renderSvg(chartOf([], { y: { kind: 'band', title: 'node', categories: [], showLabels: true } }));
    expectStandalone(bands);
    const single = renderSvg(chartOf([{ kind: 'line', interpolation: 'linear', strokeWidthPx: 1, series: [{ name: 'a', colour: '#000', xs: [3], ys: [3] }] }], { x: { kind: 'linear', title: 'x', includeZero: false } }));
    expectStandalone(single);
    expect(count(single, /<circle /g)).toBe(1);
  });

  it('skips NaN and infinite points: the line breaks there and the axes ignore them', () => {
    const svg = renderSvg(
      chartOf([{ kind: 'line', interpolation: 'linear', strokeWidthPx: 1, series: [{ name: 'a', colour: '#000', xs: [0, 1, 2, 3, 4], ys: [1, 2, Number.NaN, 4, Number.POSITIVE_INFINITY] }] }]),
    );
    expectStandalone(svg);
    const [path] = pathsOf(svg, 'mark-line');
    expect(path?.match(/M/g)).toHaveLength(2);
    expect(path?.match(/L/g)).toHaveLength(1);
    // The x axis ends at the last point with both coordinates finite (3), not at 4, whose y is infinite.
    const xLabels = [...(svg.split('<g class="x-axis"')[1] ?? '').split('</g>')[0]!.matchAll(/>([^<]+)<\/text>/g)].map((match) => match[1]);
    expect(xLabels[xLabels.length - 1]).toBe('3.0');
  });

  it('renders every chart of a routing run as a standalone, well-formed SVG', () => {
    const run = sampleRoutingRun();
    const definitions = chartDefinitions(run, summarize(run));
    expect(definitions.length).toBeGreaterThanOrEqual(10);
    for (const definition of definitions) {
      const svg = renderSvg(definition.chart);
      expectStandalone(svg);
      expect(svg).toContain(definition.chart.x.title);
    }
  });
});
