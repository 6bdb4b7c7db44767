/**
 * Analysis of one million synthetic records against the 3 s target (SPEC §11), and report generation time.
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
import type { RequestRecord } from '../src/types/record.js';
import type { RunData } from '../src/types/run.js';
import { SeededRandom } from '../src/utils/random.js';

const TARGET_ANALYSIS_SECONDS = 3;

function syntheticRun(count: number, tokensPerRequest: number): RunData {
  const random = new SeededRandom(7);
  const t0 = 1_700_000_000;
  const rate = 1000;
  const hosts = Array.from({ length: 8 }, (_, index) => `http://127.0.0.1:${30001 + index}`);
  const records: RequestRecord[] = new Array(count);
  let scheduled = t0;
  for (let index = 0; index < count; index++) {
    scheduled += -Math.log(1 - random.next()) / rate;
    const arrival = scheduled + 0.00005 + random.next() * 0.0001;
    const routerSend = arrival + 0.0002;
    const created = routerSend + 0.0001;
    const queueStart = created + 0.0005;
    const queueEnd = queueStart + random.next() * 0.05;
    const serverFirstToken = queueEnd + 0.02 + random.next() * 0.01;
    const firstToken = serverFirstToken + 0.0003;
    const gap = 0.005 + random.next() * 0.003;
    const finish = firstToken + gap * (tokensPerRequest - 1);
    const success = random.next() > 0.01;
    records[index] = {
      requestId: `r${index}`,
      datasetIndex: index,
      warmup: false,
      inputLength: 128,
      expectedOutputLength: tokensPerRequest,
      scheduledTime: scheduled,
      arrivalTime: arrival,
      routerSendTime: routerSend,
      host: hosts[index % hosts.length] as string,
      serverCreatedTime: created,
      queueTimeStart: queueStart,
      queueTimeEnd: queueEnd,
      serverFirstTokenTime: serverFirstToken,
      firstTokenTime: firstToken,
      finishTime: success ? finish : undefined,
      actualPromptTokens: 128,
      actualOutputTokens: tokensPerRequest,
      cachedTokens: 64,
      interTokenLatencies: new Array<number>(tokensPerRequest - 1).fill(gap),
      success,
      error: success ? undefined : 'http_5xx',
      prefixGroup: index % 64,
    };
  }
  return {
    info: {
      runId: 'bench',
      testLevel: 'routing',
      target: 'sim',
      status: 'completed',
      startTime: t0,
      endTime: scheduled + 1,
      requestRate: rate,
      simulated: true,
      servelabVersion: '0.1.0',
    },
    config: { requestRate: rate },
    records,
    events: [],
  };
}

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
