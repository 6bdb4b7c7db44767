import { join } from 'node:path';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { renderPng } from './render-chart.js';
import { renderedCharts } from './rendered-charts.js';

export const CHARTS_DIRECTORY = 'charts';

/** `charts/<name>.svg` and `charts/<name>.png` for every chart of the report. */
export const chartsReporter: Reporter = {
  name: 'charts',
  async write(context: ReportContext): Promise<string[]> {
    const written: string[] = [];
    for (const chart of await renderedCharts(context)) {
      const svgPath = join(context.outputDirectory, CHARTS_DIRECTORY, `${chart.name}.svg`);
      const pngPath = join(context.outputDirectory, CHARTS_DIRECTORY, `${chart.name}.png`);
      await writeFileAtomic(svgPath, chart.svg);
      await writeFileAtomic(pngPath, await renderPng(chart.svg));
      written.push(svgPath, pngPath);
    }
    return written;
  },
};
