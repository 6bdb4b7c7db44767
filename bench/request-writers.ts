/**
 * The per-request writers on the product path: the csv, jsonl and parquet reporters writing a synthetic run's
 * requests.csv, requests.jsonl and requests.parquet (10,000 and 100,000 records by default), CPU time of the whole
 * process (worker threads included), the least of several rounds.
 * Run: npm run build && node dist/bench/request-writers.js [records...]
 * Baseline in the same run: JSON.stringify of every record, the floor of writing them as text at all.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarize } from '../src/analysis/summarize.js';
import { writeRunFiles } from '../src/report/write-run-files.js';
import { syntheticRun } from './synthetic-run.js';

const ROUNDS = 5;
const WRITERS = ['csv', 'jsonl', 'parquet'];

/** CPU seconds of this process since `start`: fairer than wall time on a machine shared with other work. */
function cpuSeconds(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

async function leastCpu(rounds: number, work: () => Promise<unknown>): Promise<number> {
  let least = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    const start = process.cpuUsage();
    await work();
    least = Math.min(least, cpuSeconds(start));
  }
  return least;
}

async function main(): Promise<void> {
  const counts = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [10_000, 100_000];
  const directory = await mkdtemp(join(tmpdir(), 'servelab-bench-writers-'));
  try {
    for (const count of counts) {
      const run = syntheticRun(count, 16);
      const summary = summarize(run);
      const baseline = await leastCpu(ROUNDS, async () => {
        let characters = 0;
        for (const record of run.records) characters += JSON.stringify(record).length;
        return characters;
      });
      console.log(`${count} records: baseline JSON.stringify of every record ${(baseline * 1e3).toFixed(1)} ms CPU`);
      for (const writer of WRITERS) {
        const cpu = await leastCpu(ROUNDS, () => writeRunFiles(run, summary, directory, [writer]));
        console.log(
          `  ${writer.padEnd(8)} ${(cpu * 1e3).toFixed(1).padStart(8)} ms CPU  ${((cpu / count) * 1e6).toFixed(2).padStart(6)} µs a record  ${(cpu / baseline).toFixed(2)}× the baseline`,
        );
      }
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

await main();
