/**
 * Soak: a routing test on the simulated engine (4 servers, builtin router, every server's /metrics scraped every 0.5 s)
 * running for a configurable length, default 30 minutes, to show that the client's memory stays flat: the scraped
 * samples go to disk as they come (server-metrics.partial.csv) instead of piling up until the end of the run.
 *
 * Prints the client process's RSS at 1 minute, a third and all of the length (1, 10 and 30 minutes by default) beside
 * the target (within 10% of the first figure, the baseline measured in the same run), the V8 heap in use beside it, and
 * how much was scraped. A run of a few minutes checks that the benchmark works; only the long one tests the target.
 *
 *   node dist/bench/soak-scrape.js [--minutes 30] [--rate 2]
 *
 * The request records themselves stay in memory by design (a few hundred bytes each at this low rate); the rate is
 * kept low so that the figure shows the scraper, not the records.
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RoutingTest } from '../src/index.js';

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at < 0 ? fallback : Number(process.argv[at + 1]);
  if (!(value > 0)) throw new Error(`--${name} needs a positive number`);
  return value;
}

const minutes = argument('minutes', 30);
const rate = argument('rate', 2);
// 1, 10 and 30 minutes at the default length: 1 minute, a third, and the whole. The first is the baseline: by then the
// process has warmed up (worker thread, HTTP pools, compiled code); a shorter run takes its first figure at a third.
const checkpointsS = [Math.min(60, minutes * 20), minutes * 20, minutes * 60];
const directory = await mkdtemp(join(tmpdir(), 'servelab-bench-soak-'));
const profile = join(directory, 'profile.json');
await writeFile(profile, JSON.stringify({ kind: 'simple', stepMs: 5 }));
const rssAt: { elapsedS: number; rssMb: number; heapMb: number }[] = [];
let loadStartMs: number | undefined;
let loadEnded = false;
const sampler = setInterval(() => {
  if (loadStartMs === undefined || loadEnded) return;
  const usage = process.memoryUsage();
  rssAt.push({ elapsedS: (performance.now() - loadStartMs) / 1000, rssMb: usage.rss / 2 ** 20, heapMb: usage.heapUsed / 2 ** 20 });
}, 1000);
try {
  const numPrompts = Math.round(rate * minutes * 60);
  process.stdout.write(`soak: 4 sim servers, ${rate} req/s for ${minutes} min (${numPrompts} requests), scraping every 0.5 s\n`);
  const result = await new RoutingTest({
    numGpus: 4, requestRate: rate, numPrompts, randomInputLen: 64, randomOutputLen: 32, randomRangeRatio: 1, profile, seed: 1,
    warmupRequests: 0, outputDir: join(directory, 'run'), progress: 'off', quiet: true,
  }).run({
    onProgress: (update) => {
      if (update.phase === 'running' && loadStartMs === undefined) loadStartMs = performance.now();
      if (update.phase === 'draining' || update.phase === 'writing' || update.phase === 'done') loadEnded = true;
    },
  });
  clearInterval(sampler);
  const nearest = (seconds: number) => rssAt.reduce((best, sample) => (Math.abs(sample.elapsedS - seconds) < Math.abs(best.elapsedS - seconds) ? sample : best));
  if (rssAt.length === 0) throw new Error('no RSS sample was taken while the load ran');
  const baseline = nearest(checkpointsS[0] as number);
  let flat = true;
  for (const seconds of checkpointsS) {
    const sample = nearest(seconds);
    const ratio = sample.rssMb / baseline.rssMb;
    if (ratio > 1.1) flat = false;
    process.stdout.write(
      `RSS at ${(seconds / 60).toFixed(seconds < 60 ? 2 : 1)} min (sampled at ${sample.elapsedS.toFixed(0)} s): ${sample.rssMb.toFixed(1)} MB, ` +
        `${ratio.toFixed(3)}x the first figure (target: within 1.10x); heap used ${sample.heapMb.toFixed(1)} MB\n`,
    );
  }
  const table = join(directory, 'run', 'server-metrics.csv');
  const tableMb = (await stat(table)).size / 2 ** 20;
  process.stdout.write(
    `${result.run.records.length} records; server-metrics.csv ${tableMb.toFixed(1)} MB on disk; ` +
      `memory ${flat ? 'flat within 10%: PASS' : 'grew more than 10%: FAIL'}\n`,
  );
  if (!flat) process.exitCode = 1;
} finally {
  clearInterval(sampler);
  await rm(directory, { recursive: true, force: true });
}
