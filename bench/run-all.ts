/**
 * `npm run bench`: every benchmark in turn, each in its own process so none inherits another's heap or JIT state.
 * Each prints its figures beside its target and a ratio against a baseline it measures in the same run.
 * `npm run bench -- NAME...` runs only the named ones.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benchmarks: { name: string; file: string; args: string[]; what: string; nodeFlags?: string[] }[] = [
  {
    name: 'node-cli-targets',
    file: 'node-cli-targets.js',
    args: [],
    what: 'servelab node --target attach as users run it, streaming stub on the other core: client CPU, CV at the server, send lag, output CPU, memory per request',
  },
  { name: 'node-test-rates', file: 'node-test-rates.js', args: [], what: 'node test on the simulated engine: achieved rate and send lag at 50, 500, 2,000 req/s' },
  { name: 'load-precision', file: 'load-precision.js', args: [], what: 'pacer precision against a naive pacer, streaming stub on the other core' },
  { name: 'load-multi-worker', file: 'load-multi-worker.js', args: [], what: 'one load generator thread against two at 5,000 and 10,000 req/s' },
  { name: 'load-generators', file: 'load-generators.js', args: [], what: 'one load-generator process at 200 req/s against two at 400 req/s: send-lag p99 and CV at the server' },
  { name: 'router-overhead', file: 'router-overhead.js', args: [], what: 'builtin router, tap and nginx added latency at 1,000 req/s' },
  { name: 'sim-server-realtime', file: 'sim-server-realtime.js', args: [], what: 'the rate one real-time sim-server sustains with step timing within 1 ms of the model' },
  { name: 'sim-virtual-throughput', file: 'sim-virtual-throughput.js', args: [], what: 'virtual-time engine throughput, 64 engines' },
  { name: 'virtual-routing-test', file: 'virtual-routing-test.js', args: [], what: 'a whole virtual-time routing test (workload, routing, 64 engines, records)' },
  { name: 'request-writers', file: 'request-writers.js', args: [], what: 'the csv, jsonl and parquet reporters on 10,000 and 100,000 records: CPU a record' },
  { name: 'parquet-encoders', file: 'parquet-encoders.js', args: [], what: "requests.parquet with servelab's encoder against hyparquet-writer uncompressed, 10,000 and 100,000 records: CPU" },
  {
    name: 'twin-engines',
    file: 'twin-engines.js',
    args: [],
    what: 'calibrate -> real runs at 20-95% of capacity -> virtual-time twin on three black-box engines (sim-server with and without mixed chunks, a Python engine): the error table beside the 15% target',
  },
  { name: 'analysis-million', file: 'analysis-million.js', args: [], what: 'analysis and report of 1,000,000 records' },
  {
    name: 'server-metrics-size',
    file: 'server-metrics-size.js',
    args: [],
    what: 'server-metrics.csv bytes a scrape and an hour for a whole SGLang page, written whole (as before) and as changes, and the pace its budget sets',
  },
];

const selected = process.argv.slice(2);
const unknown = selected.filter((name) => !benchmarks.some((benchmark) => benchmark.name === name));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark ${unknown.join(', ')}; choose from ${benchmarks.map((benchmark) => benchmark.name).join(', ')}\n`);
  process.exit(2);
}
let failures = 0;
for (const benchmark of benchmarks) {
  if (selected.length > 0 && !selected.includes(benchmark.name)) continue;
  process.stdout.write(`\n=== ${benchmark.name}: ${benchmark.what}\n`);
  const path = fileURLToPath(new URL(`./${benchmark.file}`, import.meta.url));
  const outcome = spawnSync(process.execPath, ['--max-old-space-size=8192', ...(benchmark.nodeFlags ?? []), path, ...benchmark.args], { stdio: 'inherit' });
  if (outcome.status !== 0) {
    failures++;
    process.stdout.write(`=== ${benchmark.name} exited with ${outcome.status ?? outcome.signal}\n`);
  }
}
process.exit(failures === 0 ? 0 : 1);
