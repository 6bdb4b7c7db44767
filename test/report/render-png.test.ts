import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartFontOptions, renderPng } from '../../src/report/charts/render-chart.js';

const svgWith = (text: string): string =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40" viewBox="0 0 120 40"><rect width="120" height="40" fill="white"/>` +
  `<text x="4" y="24" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="14" font-weight="bold">${text}</text></svg>`;

describe('chart PNGs', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-fonts-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('load only DejaVu Sans and its bold when both files are found, and every system font otherwise', async () => {
    const lonely = join(directory, 'regular-only');
    const both = join(directory, 'both');
    for (const [folder, files] of [[lonely, ['DejaVuSans.ttf']], [both, ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf']]] as const) {
      await mkdir(folder);
      for (const file of files) await writeFile(join(folder, file), '');
    }
    expect(chartFontOptions([lonely, both])).toEqual({
      loadSystemFonts: false,
      fontFiles: [join(both, 'DejaVuSans.ttf'), join(both, 'DejaVuSans-Bold.ttf')],
      defaultFontFamily: 'DejaVu Sans',
    });
    expect(chartFontOptions([lonely])).toEqual({ loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' });
  });

  it('draw the text of the SVG (its fonts were found) at twice its size', async () => {
    const blank = Buffer.from(await renderPng(svgWith('')));
    const labelled = Buffer.from(await renderPng(svgWith('p99 12.5 ms')));
    expect(labelled.subarray(1, 4).toString('latin1')).toBe('PNG');
    // Width and height from the IHDR chunk: 2 × 120 by 2 × 40.
    expect([labelled.readUInt32BE(16), labelled.readUInt32BE(20)]).toEqual([240, 80]);
    // Text that was drawn makes the image far larger than the blank one (deflate of a white canvas is tiny).
    expect(labelled.length).toBeGreaterThan(blank.length * 2);
  });
});
