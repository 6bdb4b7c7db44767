/**
 * Analysis of one million synthetic records against its 3 s target, and report generation time.
 * Run: npm run build && node dist/bench/analysis-million.js [records]
 * Baseline in the same run: sorting one Float64Array of as many values (the floor of any percentile computation).
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarize } from '../src/analysis/summarize.js';
import { concurrencyTimeSeries } from '../src/analysis/timeseries.js';
import { DEFAULT_REPORTER_NAMES } from '../src/report/registry.js';
import { writeRunFiles } from '../src/report/write-run-files.js';
import { syntheticRun } from './synthetic-run.js';

const TARGET_ANALYSIS_SECONDS = 3;

function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** CPU seconds of this process since `start`: fairer than wall time on a machine shared with other work. */
function cpuSeconds(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 1_000_000);
  const tokensPerRequest = 16;
  const run = syntheticRun(count, tokensPerRequest);

  let start = process.hrtime.bigint();
  const baseline = new Float64Array(count);
  for (let index = 0; index < count; index++) baseline[index] = run.records[index]?.arrivalTime ?? 0;
  baseline.reverse().sort();
  const baselineSeconds = seconds(start);

  const cpuStart = process.cpuUsage();
  start = process.hrtime.bigint();
  const summary = summarize(run, { slo: { ttftMs: 100, tpotMs: 10 } });
  const summarizeSeconds = seconds(start);

  start = process.hrtime.bigint();
  concurrencyTimeSeries(run.records);
  const timeSeriesSeconds = seconds(start);
  const analysisSeconds = summarizeSeconds + timeSeriesSeconds;
  const analysisCpuSeconds = cpuSeconds(cpuStart);

  const directory = await mkdtemp(join(tmpdir(), 'servelab-bench-'));
  const reportTimes: [string, number, number][] = [];
  // HTML and charts share their rendered SVGs within one writeRunFiles call, as in a real run.
  const groups = [...DEFAULT_REPORTER_NAMES.filter((name) => name !== 'html' && name !== 'charts').map((name) => [name]), ['html', 'charts']];
  for (const group of groups) {
    start = process.hrtime.bigint();
    const written = await writeRunFiles(run, summary, directory, group);
    const time = seconds(start);
    let bytes = 0;
    for (const path of written) bytes += (await stat(path)).size;
    reportTimes.push([group.join(' + '), time, bytes]);
  }
  const reportSeconds = reportTimes.reduce((sum, [, time]) => sum + time, 0);
  await rm(directory, { recursive: true, force: true });

  console.log(`analysis of ${count} records (${tokensPerRequest} tokens each, ${summary.interTokenLatency?.count} ITL values)`);
  console.log(`  baseline: sort ${count} Float64 values        ${baselineSeconds.toFixed(3)} s`);
  console.log(`  summarize                                   ${summarizeSeconds.toFixed(3)} s`);
  console.log(`  concurrency time series (computed by summarize, reused) ${timeSeriesSeconds.toFixed(3)} s`);
  console.log(
    `  analysis total                              ${analysisSeconds.toFixed(3)} s  (target < ${TARGET_ANALYSIS_SECONDS} s: ${
      analysisSeconds < TARGET_ANALYSIS_SECONDS ? 'met' : 'MISSED'
    }; ${(analysisSeconds / baselineSeconds).toFixed(1)}× the baseline sort)`,
  );
  console.log(`  analysis CPU time (user + system)           ${analysisCpuSeconds.toFixed(3)} s  (includes garbage collection threads)`);
  for (const [name, time, bytes] of reportTimes) {
    console.log(`  reporter ${name.padEnd(34)} ${time.toFixed(3)} s  (${(bytes / 1e6).toFixed(1)} MB written)`);
  }
  console.log(`  report generation total                     ${reportSeconds.toFixed(3)} s`);
}

await main();
