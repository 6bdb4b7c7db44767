import { join } from 'node:path';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { csvField, csvLine } from '../csv/csv-format.js';
import { escapeHtml } from '../html/html-reporter.js';
import { toJson } from '../json-format.js';
import { REPEATS_CSV_COLUMNS, type RepeatsFile } from './repeats-file.js';
import { methodText, metricLabel, shortNumber } from './repeats-text.js';

/** repeats.csv: one row per metric and statistic, the interval's ends beside the estimate. */
export function repeatsCsv(file: RepeatsFile): string {
  const lines = [csvLine([...REPEATS_CSV_COLUMNS])];
  for (const metric of file.metrics) {
    lines.push(csvLine([metric.metric, metric.statistic, metric.unit, metric.estimate, metric.low, metric.high, metric.method, metric.runs, metric.requests, metric.resamples].map((value) => csvField(value))));
  }
  return lines.join('');
}

/** report.html of a repeats directory: the combined table and a link to each repeat's own report. */
export function repeatsHtml(file: RepeatsFile): string {
  const rows = file.metrics
    .map((metric) => `<tr><td>${escapeHtml(metricLabel(metric))}</td><td>${shortNumber(metric.estimate)}</td><td>${shortNumber(metric.low)}</td><td>${shortNumber(metric.high)}</td><td>${escapeHtml(methodText(metric.method))}</td><td>${metric.runs}</td><td>${metric.requests}</td><td>${metric.resamples ?? ''}</td></tr>`)
    .join('\n');
  const runs = file.runs
    .map((run) => `<li><a href="${escapeHtml(run.directory)}/report.html">${escapeHtml(run.directory)}</a>: seed ${run.seed}, ${escapeHtml(run.verdict.toUpperCase())}, ${escapeHtml(run.status)}</li>`)
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>servelab ${escapeHtml(file.test)} test: ${file.repeats} repeats</title>
<style>body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 1000px; padding: 0 1rem; }
table { border-collapse: collapse; font-size: 0.85rem; } th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child, td:nth-child(5) { text-align: left; }</style>
</head><body>
<h1>servelab ${escapeHtml(file.test)} test: ${file.repeats} repeats</h1>
<section id="repeats-confidence"><h2>Estimates with ${(file.confidence * 100).toFixed(0)}% confidence intervals</h2>
<p>${escapeHtml(file.bootstrap.method)}. Bootstrap seed ${file.bootstrap.seed}; ${escapeHtml(file.seedRule)}.</p>
<table><thead><tr><th>metric</th><th>estimate</th><th>low</th><th>high</th><th>method</th><th>runs</th><th>values</th><th>resamples</th></tr></thead><tbody>
${rows}
</tbody></table></section>
<section id="repeats-runs"><h2>Repeats</h2><ul>
${runs}
</ul></section>
</body></html>
`;
}

/** Writes a repeats directory's own files (summary.json, repeats.csv, report.html); returns their paths. */
export async function writeRepeatsFiles(directory: string, file: RepeatsFile): Promise<string[]> {
  const written: string[] = [];
  for (const [name, content] of [
    ['summary.json', toJson(file)],
    ['repeats.csv', repeatsCsv(file)],
    ['report.html', repeatsHtml(file)],
  ] as const) {
    const path = join(directory, name);
    await writeFileAtomic(path, content);
    written.push(path);
  }
  return written;
}
