import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { writeRunFiles } from '../../src/report/write-run-files.js';
import { sampleRoutingRun } from './sample-run.js';

describe('html report and charts', () => {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-html-'));
    const run = sampleRoutingRun();
    await writeRunFiles(run, summarize(run, { slo: { ttftMs: 60 } }), directory, ['html', 'charts']);
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('writes a self-contained report.html: inline SVG charts, no script, no external resource', async () => {
    const html = await readFile(join(directory, 'report.html'), 'utf8');
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    const figures = html.match(/<figure class="chart"[^>]*data-chart="([^"]+)"/g) ?? [];
    const names = figures.map((figure) => /data-chart="([^"]+)"/.exec(figure)?.[1]);
    expect(names).toEqual(
      expect.arrayContaining(['cdf-ttft', 'cdf-tpot', 'cdf-itl', 'cdf-total-latency', 'lifecycle-breakdown', 'request-timeline', 'concurrency', 'throughput', 'offered-load', 'node-share', 'node-in-flight']),
    );
    expect(html.match(/<svg /g)?.length).toBe(names.length);
    expect(html).toContain('crash node 1'); // failure events are marked on time axes
    expect(html).toContain('<td>13</td><td>1.860</td>'); // failures until the restore, and for how long
    expect(html).toContain('Goodput');
    expect(html).not.toMatch(/>-0\.0*</);
    expect(html).toContain('http://127.0.0.1:30002');
  });

  it('writes every chart as SVG and PNG', async () => {
    const files = (await readdir(join(directory, 'charts'))).sort();
    const svgs = files.filter((file) => file.endsWith('.svg'));
    expect(svgs.length).toBeGreaterThanOrEqual(11);
    expect(files.filter((file) => file.endsWith('.png')).map((file) => file.replace('.png', '.svg'))).toEqual(svgs);
    const png = await readFile(join(directory, 'charts', 'concurrency.png'));
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.length).toBeGreaterThan(5000);
    expect(files.some((file) => file.endsWith('.tmp'))).toBe(false);
  });
});
