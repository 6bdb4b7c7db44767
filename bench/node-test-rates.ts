/**
 * Node test on the simulated engine at 50, 500 and 2,000 req/s (issue: the node-test foundation): the achieved arrival
 * rate against the target and the send lag (arrival_time - scheduled_time) p50/p99, as a user's run reports them.
 * The engine uses a 1 ms `simple` profile with short outputs so that the server is never the bottleneck; the baseline
 * is the same schedule's ideal (achieved = target, lag 0). Targets (rate within 1%, lag p99 < 0.5 ms at
 * 1,000 req/s).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeTest } from '../src/index.js';

const directory = await mkdtemp(join(tmpdir(), 'servelab-bench-rates-'));
const profile = join(directory, 'profile.json');
await writeFile(profile, JSON.stringify({ kind: 'simple', stepMs: 1 }));
try {
  for (const rate of [50, 500, 2000]) {
    const numPrompts = Math.min(6000, Math.max(300, rate * 4));
    const result = await new NodeTest({
      requestRate: rate, numPrompts, randomInputLen: 32, randomOutputLen: 16, randomRangeRatio: 1, profile, seed: 1, warmupRequests: 10,
      maxRunningRequests: 4096, outputDir: join(directory, `rate-${rate}`), progress: 'off',
    }).run();
    const offered = result.metrics.offeredLoad;
    const achieved = offered.achievedRate ?? Number.NaN;
    // The sample's own schedule is the baseline: a perfect pacer's arrivals span exactly the scheduled span.
    const records = result.run.records;
    const span = (pick: (index: number) => number): number => pick(records.length - 1) - pick(0);
    const scheduledSpan = span((index) => records[index]?.scheduledTime as number);
    const arrivalSpan = span((index) => records[index]?.arrivalTime as number);
    const scheduledRate = (records.length - 1) / scheduledSpan;
    const lag = offered.sendLag;
    const format = (seconds: number | undefined): string => (seconds === undefined ? 'n/a' : (seconds * 1000).toFixed(3));
    process.stdout.write(
      `rate ${String(rate).padStart(5)} req/s, ${numPrompts} requests: achieved ${achieved.toFixed(1)} req/s against this sample's scheduled ${scheduledRate.toFixed(1)} req/s ` +
        `(ratio ${(scheduledSpan / arrivalSpan).toFixed(4)}, target within 1%; ${((achieved / rate) * 100).toFixed(1)}% of the nominal rate, a Poisson sample of this size deviating by about ${(100 / Math.sqrt(numPrompts)).toFixed(1)}%), ` +
        `inter-arrival CV ${offered.interArrivalCv?.toFixed(3) ?? 'n/a'}, send lag p50 ${format(lag?.p50)} ms, p99 ${format(lag?.p99)} ms, max ${format(lag?.max)} ms (target p99 < 0.5 ms), failed ${result.metrics.counts.failed}\n`,
    );
  }
} finally {
  await rm(directory, { recursive: true, force: true });
}
