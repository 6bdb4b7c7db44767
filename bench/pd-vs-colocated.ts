/**
 * Prefill/decode disaggregation against the same GPUs co-located, on a prompt-heavy workload (long prompts, short
 * outputs), in virtual time with the built-in Llama-3-8B H100 profile: TTFT p50/p99 and TPOT p50/p99 at each rate, for
 * 4 co-located servers (round robin) and for 2 prefill + 2 decode and 3 prefill + 1 decode servers (round robin on each
 * side), KV over the default link (25 GB/s, 0.5 ms; 128 KiB per token). Issue 25's check: with prefills elsewhere,
 * decode is no longer interrupted by them (TPOT p99), and what that costs in TTFT.
 *
 *   npm run build && node dist/bench/pd-vs-colocated.js [inputLen=4096] [outputLen=64] [prompts=3000] [rates=4,8,12,16]
 */
import { systemClock } from '../src/clock/clock.js';
import { resolveRoutingTestConfig } from '../src/config/routing-test-config.js';
import { buildWorkload } from '../src/orchestration/build-workload.js';
import { runVirtualTime } from '../src/orchestration/virtual-time/virtual-time-run.js';
import type { RequestRecord } from '../src/types/record.js';

const inputLen = Number(process.argv[2] ?? 4096);
const outputLen = Number(process.argv[3] ?? 64);
const numPrompts = Number(process.argv[4] ?? 3000);
const rates = (process.argv[5] ?? '4,8,12,16').split(',').map(Number);

interface Layout {
  name: string;
  pd?: { numPrefill: number; numDecode: number };
}
const layouts: Layout[] = [{ name: '4 co-located' }, { name: '2P2D', pd: { numPrefill: 2, numDecode: 2 } }, { name: '3P1D', pd: { numPrefill: 3, numDecode: 1 } }];

function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
}

async function run(layout: Layout, rate: number): Promise<string> {
  const config = resolveRoutingTestConfig({
    virtualTime: true, numGpus: 4, routingPolicy: 'round_robin', numPrompts, warmupRequests: 0, requestRate: rate,
    datasetName: 'random-ids', randomInputLen: inputLen, randomOutputLen: outputLen, randomRangeRatio: 1, profile: 'llama-3-8b-h100', seed: 1,
    ...(layout.pd === undefined ? {} : { pdDisaggregation: true, ...layout.pd }),
  });
  const workload = await buildWorkload(config);
  const load = await runVirtualTime({ config, workload, routed: true, clock: systemClock, runId: 'bench' });
  const ok = load.records.filter((record: RequestRecord) => record.success && record.firstTokenTime !== undefined && record.arrivalTime !== undefined);
  const ttftMs = ok.map((record) => ((record.firstTokenTime as number) - (record.arrivalTime as number)) * 1000);
  const tpotMs = ok
    .filter((record) => (record.actualOutputTokens ?? 0) > 1 && record.finishTime !== undefined)
    .map((record) => (((record.finishTime as number) - (record.firstTokenTime as number)) * 1000) / ((record.actualOutputTokens as number) - 1));
  const transferMs = ok.filter((record) => record.kvTransferTime !== undefined).map((record) => (record.kvTransferTime as number) * 1000);
  const f = (value: number): string => (Number.isNaN(value) ? '-' : value.toFixed(1)).padStart(8);
  return `${layout.name.padEnd(13)} ${String(rate).padStart(5)} ${String(ok.length).padStart(5)} ${f(percentile(ttftMs, 0.5))} ${f(percentile(ttftMs, 0.99))} ${f(percentile(tpotMs, 0.5))} ${f(percentile(tpotMs, 0.99))} ${f(percentile(transferMs, 0.5))} ${f(percentile(transferMs, 0.99))}`;
}

process.stdout.write(`prompt-heavy: ${inputLen} in / ${outputLen} out, ${numPrompts} prompts per run, llama-3-8b-h100, 4 GPUs\n`);
process.stdout.write(`${'layout'.padEnd(13)} ${'req/s'.padStart(5)} ${'ok'.padStart(5)} ${'TTFT p50'.padStart(8)} ${'TTFT p99'.padStart(8)} ${'TPOT p50'.padStart(8)} ${'TPOT p99'.padStart(8)} ${'KV p50'.padStart(8)} ${'KV p99'.padStart(8)}  (ms)\n`);
for (const rate of rates) for (const layout of layouts) process.stdout.write(`${await run(layout, rate)}\n`);
