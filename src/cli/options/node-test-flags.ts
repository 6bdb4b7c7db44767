import { InvalidArgumentError } from 'commander';
import { parseInteger, parseIntegerList, parseJson, parseNumber, parseRate, parseSlo, type FlagSpec } from './option-table.js';

/** `--total-timeout`: milliseconds, or `by-size` (each request's deadline from its own lengths). */
function parseTotalTimeout(raw: string): number | 'by-size' {
  if (raw.trim() === 'by-size') return 'by-size';
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value)) throw new InvalidArgumentError('expected a number of milliseconds, or by-size.');
  return value;
}

/** `--twin-sensitivity`: auto, off, or a step error in percent (`2.5` or `2.5%`). */
export function parseTwinSensitivity(raw: string): number | 'auto' | 'off' {
  const text = raw.trim();
  if (text === 'auto' || text === 'off') return text;
  const number = text.endsWith('%') ? text.slice(0, -1).trim() : text;
  const value = Number(number);
  if (number === '' || !Number.isFinite(value) || value <= 0 || value >= 100) {
    throw new InvalidArgumentError('expected a step error in percent above 0 and below 100 (e.g. 2.5 or 2.5%), auto (the profile\'s own) or off.');
  }
  return value;
}

const TARGET = 'Target:';
const SERVER = 'Server settings (sim and sglang targets):';
const WORKLOAD = 'Workload:';
const CLIENT = 'Client:';
const OUTPUT = 'Output:';

export const targetFlags: FlagSpec[] = [
  { flag: 'target', key: 'target', kind: 'value', valueName: 'kind', choices: ['sim', 'sglang', 'attach'], defaultText: 'sim, or sglang when --model-path or --gpu-id is given', group: TARGET, description: 'sim: servelab\'s simulated SGLang engine on loopback (no GPU); sglang: launch python -m sglang.launch_server; attach: a server that already runs (--url)' },
  { flag: 'virtual-time', key: 'virtualTime', kind: 'boolean', group: TARGET, description: 'sim only: run as a discrete-event simulation in virtual time (no sockets; a million requests in seconds), same files, marked simulated' },
  { flag: 'twin-sensitivity', key: 'twinSensitivity', kind: 'value', valueName: 'percent|auto|off', parse: parseTwinSensitivity, defaultText: "auto: the profile's held-out step error, else an assumed 5%", group: TARGET, description: 'virtual time: run the same workload again with every step e% shorter and e% longer and report how far each headline metric moves (summary.json extras.twinSensitivity, terminal, report.html), warning where one moves by more than 15%; off runs no band (docs/simulated-engine.md, "How far to trust the twin")' },
  { flag: 'url', key: 'url', kind: 'value', valueName: 'url', group: TARGET, description: 'attach: the running server, e.g. http://127.0.0.1:30000' },
  { flag: 'launcher', key: 'launcher', kind: 'value', valueName: 'where', choices: ['local', 'slurm'], defaultText: 'local', group: TARGET, description: 'where launched servers, the router and load generators run: local (this host) or slurm (inside an allocation, e.g. under salloc: job steps in it; elsewhere, a login node: one batch job submitted with sbatch and followed, --dry-run prints it; docs/slurm.md)' },
  { flag: 'gpus-per-node', key: 'gpusPerNode', kind: 'value', valueName: 'n', parse: parseInteger, group: TARGET, description: 'slurm: servers per node (SGLang servers take GPU ids per node); default: the servers spread over every node of the allocation' },
  { flag: 'server-request-log-dir', key: 'serverRequestLogDir', kind: 'value', valueName: 'dir', group: TARGET, description: "attach: where the SGLang server writes its request log (its --export-metrics-to-file-dir); joined to the records for server timing on every protocol" },
];

export const serverFlags: FlagSpec[] = [
  { flag: 'model-path', key: 'modelPath', kind: 'value', valueName: 'path', group: SERVER, description: 'model weights for SGLang (a local folder or a name SGLang can load); for sim only a served name' },
  { flag: 'gpu-id', key: 'gpuId', kind: 'value', valueName: 'id[,id...]', parse: parseIntegerList, defaultText: '0', group: SERVER, description: 'GPU the server is pinned to (CUDA_VISIBLE_DEVICES); with --tp-size N, the first of N GPUs or a list of N ids' },
  { flag: 'tp-size', key: 'tpSize', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1', group: SERVER, description: 'tensor parallel size' },
  { flag: 'max-running-requests', key: 'maxRunningRequests', kind: 'value', valueName: 'n', parse: parseInteger, group: SERVER, description: 'most requests in the running batch' },
  { flag: 'max-total-tokens', key: 'maxTotalTokens', kind: 'value', valueName: 'n', parse: parseInteger, group: SERVER, description: 'KV cache capacity in tokens' },
  { flag: 'mem-fraction-static', key: 'memFractionStatic', kind: 'value', valueName: 'fraction', parse: parseNumber, group: SERVER, description: 'sglang: GPU memory fraction for weights and KV cache' },
  { flag: 'chunked-prefill-size', key: 'chunkedPrefillSize', kind: 'value', valueName: 'tokens', parse: parseInteger, group: SERVER, description: 'most prefill tokens in one scheduling step (longer prompts are chunked)' },
  { flag: 'schedule-policy', key: 'schedulePolicy', kind: 'value', valueName: 'policy', group: SERVER, description: 'waiting-queue order: fcfs, lpm (longest prefix match), ...' },
  { flag: 'schedule-conservativeness', key: 'scheduleConservativeness', kind: 'value', valueName: 'ratio', parse: parseNumber, group: SERVER, description: 'how much KV room admission reserves for future decode tokens' },
  { flag: 'enable-torch-compile', key: 'enableTorchCompile', kind: 'boolean', group: SERVER, description: 'sglang: compile the model with torch.compile' },
  { flag: 'quantization', key: 'quantization', kind: 'value', valueName: 'method', group: SERVER, description: 'sglang: quantization method (fp8, awq, ...)' },
  { flag: 'disable-radix-cache', key: 'disableRadixCache', kind: 'boolean', group: SERVER, description: 'turn the prefix cache off' },
  { flag: 'enable-mixed-chunk', key: 'enableMixedChunk', kind: 'boolean', group: SERVER, description: "prefill steps also decode the running batch (SGLang's --enable-mixed-chunk; sim: default the calibrated profile's scheduling, else off)" },
  { flag: 'enable-mixed-chunk', key: 'enableMixedChunk', kind: 'negatable', group: SERVER, description: 'sim: prefill steps apart from decode steps even where the calibrated profile says its server mixes them' },
  { flag: 'page-size', key: 'pageSize', kind: 'value', valueName: 'tokens', parse: parseInteger, group: SERVER, description: "KV tokens per page (SGLang's --page-size; sim: KV in whole pages, chunks cut on page boundaries, the prefix cache in whole pages; default the calibrated profile's, else 1)" },
  { flag: 'port', key: 'port', kind: 'value', valueName: 'port', parse: parseInteger, group: SERVER, description: 'port for the launched server (sim: any free port; sglang: 30000)' },
  { flag: 'extra-server-arg', key: 'extraServerArgs', kind: 'value', valueName: 'arg', repeatable: true, group: SERVER, description: 'an extra argument passed verbatim to the server (repeat for several)' },
  { flag: 'profile', key: 'profile', kind: 'value', valueName: 'name|file', defaultText: 'llama-3-8b-h100', group: SERVER, description: 'sim: engine cost profile, built-in name or JSON file' },
  { flag: 'python-executable', key: 'pythonExecutable', kind: 'value', valueName: 'path', defaultText: 'python', group: SERVER, description: 'sglang: the Python interpreter with SGLang installed' },
  { flag: 'nnodes', key: 'nnodes', kind: 'value', valueName: 'n', parse: parseInteger, group: SERVER, description: "sglang with --launcher slurm: nodes one server spans (SGLang's --nnodes, --node-rank, --dist-init-addr); only rank 0 serves HTTP and is registered with the router" },
  { flag: 'ready-timeout', key: 'readyTimeoutS', kind: 'value', valueName: 'seconds', parse: parseNumber, group: SERVER, description: 'how long a launched server may take to get ready (sim 30, sglang 600)' },
];

export const workloadFlags: FlagSpec[] = [
  { flag: 'request-rate', key: 'requestRate', kind: 'value', valueName: 'req/s', parse: parseRate, defaultText: 'inf', group: WORKLOAD, description: 'mean arrival rate; inf sends every request at once' },
  { flag: 'num-prompts', key: 'numPrompts', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1000', group: WORKLOAD, description: 'measured requests' },
  { flag: 'arrival', key: 'arrival', kind: 'value', valueName: 'process', choices: ['poisson', 'gamma', 'constant', 'trace'], defaultText: 'poisson', group: WORKLOAD, description: 'arrival process (open loop: no request waits for another)' },
  { flag: 'arrival-draw', key: 'arrivalDraw', kind: 'value', valueName: 'draw', choices: ['conditioned', 'independent'], defaultText: 'conditioned', group: WORKLOAD, description: 'poisson / gamma: conditioned = gaps rescaled so the scheduled rate is exactly --request-rate; independent = i.i.d. gaps as bench_serving draws them (the rate then misses by chance, about 1/sqrt(n))' },
  { flag: 'burstiness', key: 'burstiness', kind: 'value', valueName: 'factor', parse: parseNumber, defaultText: '1', group: WORKLOAD, description: 'gamma arrivals: 1 = Poisson, smaller = burstier, the mean rate kept' },
  { flag: 'trace-path', key: 'tracePath', kind: 'value', valueName: 'file', group: WORKLOAD, description: 'trace arrivals: a file of timestamps' },
  { flag: 'trace-time-scale', key: 'traceTimeScale', kind: 'value', valueName: 'factor', parse: parseNumber, defaultText: '1', group: WORKLOAD, description: 'trace arrivals: multiplies every gap' },
  { flag: 'concurrency', key: 'concurrency', kind: 'value', valueName: 'users', parse: parseInteger, group: WORKLOAD, description: 'closed loop instead of arrivals: this many users, each sending its next request when its previous one finished' },
  { flag: 'think-time', key: 'thinkTimeMs', kind: 'value', valueName: 'ms', parse: parseNumber, group: WORKLOAD, description: 'closed loop: pause between a user\'s request finishing and its next one' },
  { flag: 'stages', key: 'stages', kind: 'value', valueName: 'json', parse: parseJson, group: WORKLOAD, description: 'load that changes over time, e.g. \'[{"durationS": 10, "rate": 5}, {"durationS": 20, "rate": 50, "ramp": "linear"}]\' (or "concurrency" per stage for a closed loop)' },
  { flag: 'dataset-name', key: 'datasetName', kind: 'value', valueName: 'name', choices: ['sharegpt', 'random', 'random-ids', 'shared-prefix', 'custom', 'mooncake'], defaultText: 'random', group: WORKLOAD, description: 'where prompts come from (mooncake: a local Mooncake trace .jsonl; replay its timestamps with --arrival trace)' },
  { flag: 'dataset-path', key: 'datasetPath', kind: 'value', valueName: 'file', group: WORKLOAD, description: 'sharegpt / custom / mooncake: a local file (nothing is downloaded)' },
  { flag: 'random-input-len', key: 'randomInputLen', kind: 'value', valueName: 'tokens', parse: parseInteger, defaultText: '1024', group: WORKLOAD, description: 'random: longest prompt' },
  { flag: 'random-output-len', key: 'randomOutputLen', kind: 'value', valueName: 'tokens', parse: parseInteger, defaultText: '1024', group: WORKLOAD, description: 'random: longest output' },
  { flag: 'random-range-ratio', key: 'randomRangeRatio', kind: 'value', valueName: 'ratio', parse: parseNumber, defaultText: '0', group: WORKLOAD, description: 'random: lengths uniform in [ratio x len, len]' },
  { flag: 'sharegpt-output-len', key: 'sharegptOutputLen', kind: 'value', valueName: 'tokens', parse: parseInteger, group: WORKLOAD, description: 'sharegpt: one output length for every request' },
  { flag: 'gsp-num-groups', key: 'gspNumGroups', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '64', group: WORKLOAD, description: 'shared-prefix: system prompt groups' },
  { flag: 'gsp-prompts-per-group', key: 'gspPromptsPerGroup', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '16', group: WORKLOAD, description: 'shared-prefix: questions per group' },
  { flag: 'gsp-system-prompt-len', key: 'gspSystemPromptLen', kind: 'value', valueName: 'tokens', parse: parseInteger, defaultText: '2048', group: WORKLOAD, description: 'shared-prefix: system prompt length' },
  { flag: 'gsp-question-len', key: 'gspQuestionLen', kind: 'value', valueName: 'tokens', parse: parseInteger, defaultText: '128', group: WORKLOAD, description: 'shared-prefix: question length' },
  { flag: 'gsp-output-len', key: 'gspOutputLen', kind: 'value', valueName: 'tokens', parse: parseInteger, defaultText: '256', group: WORKLOAD, description: 'shared-prefix: output length' },
  { flag: 'gsp-zipf-exponent', key: 'gspZipfExponent', kind: 'value', valueName: 'exponent', parse: parseNumber, group: WORKLOAD, description: 'shared-prefix: draw groups from a Zipf distribution (popular groups repeat) instead of equal groups' },
  { flag: 'gsp-num-turns', key: 'gspNumTurns', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1', group: WORKLOAD, description: 'shared-prefix: turns per conversation; turn t repeats the earlier turns and adds a question (SGLang --gsp-num-turns)' },
  { flag: 'gsp-group-distribution', key: 'gspGroupDistribution', kind: 'value', valueName: 'uniform|zipf', choices: ['uniform', 'zipf'], defaultText: 'uniform', group: WORKLOAD, description: 'shared-prefix: equal groups, or each request\'s group drawn from Zipf(--gsp-zipf-alpha), group 0 hottest' },
  { flag: 'gsp-zipf-alpha', key: 'gspZipfAlpha', kind: 'value', valueName: 'alpha', parse: parseNumber, group: WORKLOAD, description: 'shared-prefix: the Zipf alpha for --gsp-group-distribution zipf' },
  { flag: 'gsp-send-routing-key', key: 'gspSendRoutingKey', kind: 'boolean', group: WORKLOAD, description: 'shared-prefix: send each group\'s routing key in the X-SMG-Routing-Key header (smg consistent_hashing routes on it)' },
  { flag: 'gsp-ordered', key: 'gspOrdered', kind: 'boolean', group: WORKLOAD, description: 'shared-prefix: keep requests in generated order instead of shuffling' },
  { flag: 'mooncake-num-rounds', key: 'mooncakeNumRounds', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1', group: WORKLOAD, description: 'mooncake: rounds per session (SGLang --mooncake-num-rounds)' },
  { flag: 'tokenizer', key: 'tokenizerPath', kind: 'value', valueName: 'tokenizer.json', group: WORKLOAD, description: 'a local tokenizer.json (Hugging Face format): prompts get exactly the drawn token counts for that model (never downloaded)' },
  { flag: 'warmup-requests', key: 'warmupRequests', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1', group: WORKLOAD, description: 'requests sent first, all at once (at most --max-concurrency at a time) as SGLang\'s bench_serving does, and left out of the results; more of them also warm servelab\'s own client before t0 (see docs/workloads.md)' },
  { flag: 'seed', key: 'seed', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1', group: WORKLOAD, description: 'seed for prompts, lengths and arrivals: the same seed gives the same run' },
  { flag: 'max-concurrency', key: 'maxConcurrency', kind: 'value', valueName: 'n', parse: parseInteger, group: WORKLOAD, description: 'cap on requests in flight; held-back arrivals are reported (intended_latency)' },
];

export const clientFlags: FlagSpec[] = [
  { flag: 'protocol', key: 'protocol', kind: 'value', valueName: 'name', choices: ['sglang', 'openai-completions', 'openai-chat'], defaultText: 'sglang', group: CLIENT, description: 'sglang: native /generate (with server timing keys); openai-*: /v1/completions or /v1/chat/completions' },
  { flag: 'stream', key: 'stream', kind: 'negatable', group: CLIENT, description: 'wait for whole answers instead of streaming tokens' },
  { flag: 'ignore-eos', key: 'ignoreEos', kind: 'negatable', group: CLIENT, description: 'let the model stop at end-of-sequence (by default outputs have exactly the requested length)' },
  { flag: 'openai-extensions', key: 'openaiExtensions', kind: 'negatable', group: CLIENT, description: "openai-*: send plain OpenAI requests, without SGLang's and vLLM's extensions (rid, continuous_usage_stats, ignore_eos), for servers that refuse unknown fields such as OpenAI's own API; requests are then not joined to SGLang's request log, a chunk's tokens are not counted from its usage, and outputs may stop early" },
  { flag: 'temperature', key: 'temperature', kind: 'value', valueName: 't', parse: parseNumber, defaultText: '0', group: CLIENT, description: 'sampling temperature' },
  { flag: 'model', key: 'model', kind: 'value', valueName: 'name', group: CLIENT, description: 'openai-*: the model name to send (default: --model-path)' },
  { flag: 'api-key-env', key: 'apiKeyEnv', kind: 'value', valueName: 'variable', defaultText: 'OPENAI_API_KEY', group: CLIENT, description: 'environment variable holding an API key (never written anywhere)' },
  { flag: 'client-workers', key: 'clientWorkers', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1', group: CLIENT, description: 'load generator threads sharing one start instant: more than one spreads sending over cores (open loop), for rates one core cannot drive' },
  { flag: 'client-nodes', key: 'clientNodes', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1', group: CLIENT, description: 'load-generator processes sharing one schedule and one start instant, each on a client node of the run\'s placement (this host locally), their clocks measured and corrected (open loop; docs/load-generators.md)' },
  { flag: 'connect-timeout', key: 'connectTimeoutMs', kind: 'value', valueName: 'ms', parse: parseNumber, defaultText: '10000', group: CLIENT, description: 'connection deadline' },
  { flag: 'first-byte-timeout', key: 'firstByteTimeoutMs', kind: 'value', valueName: 'ms', parse: parseNumber, defaultText: '600000', group: CLIENT, description: 'deadline for the response headers' },
  { flag: 'idle-timeout', key: 'idleTimeoutMs', kind: 'value', valueName: 'ms', parse: parseNumber, defaultText: '600000', group: CLIENT, description: 'longest wait for progress: between two events of a stream (comments and partial lines do not count) or two pieces of a body' },
  { flag: 'total-timeout', key: 'totalTimeoutMs', kind: 'value', valueName: 'ms|by-size', parse: parseTotalTimeout, defaultText: 'by-size', group: CLIENT, description: "deadline for a whole request; by-size gives each request 600000 + 1 per prompt token + 250 per output token (a 1024-in/1024-out request: 857000)" },
  { flag: 'warmup-timeout', key: 'warmupTimeoutMs', kind: 'value', valueName: 'ms', parse: parseNumber, defaultText: '120000', group: CLIENT, description: 'deadline for each warmup request' },
  { flag: 'max-body-bytes', key: 'maxBodyBytes', kind: 'value', valueName: 'bytes', parse: parseNumber, defaultText: '134217728', group: CLIENT, description: 'cap on a non-streamed answer (beyond: malformed_stream); at most 268435456 (256 MiB: one answer is one string, and V8 strings end near 512 MiB)' },
  { flag: 'max-sse-event-bytes', key: 'maxSseEventBytes', kind: 'value', valueName: 'bytes', parse: parseNumber, defaultText: '33554432', group: CLIENT, description: 'cap on one streamed event (beyond: malformed_stream); at most 268435456 (256 MiB)' },
  { flag: 'max-in-flight-body-bytes', key: 'maxInFlightBodyBytes', kind: 'value', valueName: 'bytes', parse: parseNumber, defaultText: '1073741824', group: CLIENT, description: "cap on the bytes of answers held at once, all requests in flight together (beyond: harness_limit, servelab's own memory limit); per client worker" },
  { flag: 'http-transport', key: 'httpTransport', kind: 'value', valueName: 'client', choices: ['socket', 'undici'], group: CLIENT, description: "the HTTP client: socket (servelab's lean HTTP/1.1 client, the default for http://) or undici (the default for https://; for a server that needs more of HTTP than the lean client speaks)" },
  { flag: 'flush-cache', key: 'flushCache', kind: 'boolean', group: CLIENT, description: 'call /flush_cache before the run' },
];

export const outputFlags: FlagSpec[] = [
  { flag: 'output-dir', key: 'outputDir', kind: 'value', valueName: 'dir', group: OUTPUT, description: 'the run directory itself (default: results/<run-id>)' },
  { flag: 'results-root', key: 'resultsRoot', kind: 'value', valueName: 'dir', defaultText: 'results', group: OUTPUT, description: 'where run directories are made' },
  { flag: 'on-process-exit', key: 'onProcessExit', kind: 'value', valueName: 'what', choices: ['continue', 'stop'], defaultText: 'continue', group: OUTPUT, description: 'when a launched server, router or taps process dies: go on (its requests fail) or stop the run early; either way it is an event and a notice' },
  { flag: 'run-id', key: 'runId', kind: 'value', valueName: 'id', group: OUTPUT, description: 'name of the run (default: date-time-level-random)' },
  { flag: 'progress', key: 'progress', kind: 'value', valueName: 'mode', choices: ['auto', 'bar', 'lines', 'off'], defaultText: 'auto', group: OUTPUT, description: 'live progress: a bar on a terminal, plain lines otherwise' },
  { flag: 'quiet', key: 'quiet', kind: 'boolean', group: OUTPUT, description: 'print no summary at the end' },
  { flag: 'server-metrics-mb-per-hour', key: 'serverMetricsMbPerHour', kind: 'value', valueName: 'mb', parse: parseNumber, defaultText: '100', group: OUTPUT, description: "disk server-metrics.csv may take per hour, all servers together: only series that changed are written, and the scrape interval backs off from 500 ms to stay under it (a whole default SGLang page is 33 KiB; under load one server keeps 500 ms for ~4 min, then ~1.2 s). A tenth of an hour's worth may go ahead of the rate; past 1 GB a run it grows at a tenth of the rate, with a notice" },
  { flag: 'harness-error-share', key: 'harnessErrorShare', kind: 'value', valueName: 'share', parse: parseNumber, defaultText: '0.05', group: OUTPUT, description: 'the harness grade: a metric is affected when servelab\'s own error bound on it exceeds this share of its p50 (0.05 = 5%)' },
  { flag: 'clock-correction', key: 'clockCorrection', kind: 'negatable', group: OUTPUT, description: 'keep server timestamps as the servers stamped them: by default each server clock\'s offset from this host is bounded from the requests themselves and, where they prove the clocks disagree, server instants in requests.csv, Parquet and the time series are moved onto this host\'s clock (requests.jsonl keeps raw values; summary.json clockOffsets says what was done)' },
  { flag: 'repeats', key: 'repeats', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1', group: OUTPUT, description: 'run the test n times, repeat k with seed + k - 1, each in RUN_DIR/repeat-k/ (every file a single run has); RUN_DIR/summary.json, repeats.csv and report.html give each headline metric (throughput, goodput, TTFT/TPOT/ITL/E2E mean, p50, p90, p99, stage times) as an estimate with a 95% interval: latencies by a seeded two-level bootstrap (runs, then requests within each), throughput by t over runs (docs/statistics.md)' },
  { flag: 'slo', key: 'slo', kind: 'value', valueName: 'objectives', parse: parseSlo, group: OUTPUT, description: 'goodput objectives in ms, e.g. ttft=200,tpot=50,total=10000' },
];

/** Accepted only to say where a prefill/decode pair is measured (src/config/node-test-config.ts): a routing test. */
const nodePdFlags: FlagSpec[] = [
  { flag: 'pd-disaggregation', key: 'pdDisaggregation', kind: 'boolean', group: TARGET, description: 'not in a node test: a prefill/decode pair needs a router; use servelab route --pd-disaggregation --num-prefill 1 --num-decode 1 (or attach with --prefill-url and --decode-url)' },
];

export const nodeTestFlags: FlagSpec[] = [...targetFlags, ...nodePdFlags, ...serverFlags, ...workloadFlags, ...clientFlags, ...outputFlags];
