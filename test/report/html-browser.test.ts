import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { writeRunFiles } from '../../src/report/write-run-files.js';
import { sampleRoutingRun } from './sample-run.js';
import { CHROMIUM_PATH as CHROMIUM, chromiumMissing } from '../helpers/require-tool.js';

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const skipReason = chromiumMissing();

describe.skipIf(skipReason !== undefined)(`report.html in headless Chromium${skipReason === undefined ? '' : ` (skipped: ${skipReason})`}`, () => {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-browser-'));
    const run = sampleRoutingRun();
    await writeRunFiles(run, summarize(run), directory, ['html']);
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('opens from disk with networking off, renders every chart and logs no console error', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    try {
      const context = await browser.newContext({ offline: true });
      const page = await context.newPage();
      const problems: string[] = [];
      const requests: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      page.on('request', (request) => requests.push(request.url()));
      await page.goto(pathToFileURL(join(directory, 'report.html')).href, { waitUntil: 'load' });

      const charts = await page.$$eval('figure.chart', (figures) =>
        figures.map((figure) => {
          const svg = figure.querySelector('svg');
          const box = svg?.getBoundingClientRect();
          return {
            name: figure.getAttribute('data-chart'),
            width: box?.width ?? 0,
            height: box?.height ?? 0,
            marks: svg?.querySelectorAll('path, rect, line').length ?? 0,
          };
        }),
      );
      expect(charts.length).toBeGreaterThanOrEqual(11);
      for (const chart of charts) {
        expect(chart.width, chart.name ?? '').toBeGreaterThan(100);
        expect(chart.height, chart.name ?? '').toBeGreaterThan(50);
        expect(chart.marks, chart.name ?? '').toBeGreaterThan(5);
      }
      expect(await page.title()).toContain('sample-routing');
      expect(problems).toEqual([]);
      // Only the file itself was loaded: nothing else, from disk or network.
      expect(requests.filter((url) => !url.endsWith('/report.html'))).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
