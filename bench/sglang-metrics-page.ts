/**
 * A whole SGLang `/metrics` page, as a default co-located server (metrics on, one GPU, no optional features) serves it,
 * for measuring what scraping it costs on disk (bench/server-metrics-size.ts) and for the test that bounds that cost
 * (test/scrape/server-metrics-budget.test.ts).
 *
 * Where it comes from: the families are those SGLang's metrics reference lists as registered by default
 * (sgl-project/sglang docs/references/production_metrics.md, the "Metrics Reference" tables of its 2026 version:
 * request metrics with `model_name`, scheduler metrics with `model_name`, `engine_type`, `tp_rank`, `pp_rank`,
 * `moe_ep_rank`; feature-gated families left out); the bucket bounds of the four latency histograms are SGLang's
 * defaults (python/sglang/srt/observability/metrics_collector.py, as the simulator serves them:
 * src/engine/metrics/sglang-metrics.ts), and `func_latency_seconds` has the 18 bounds of the reference's example page.
 * The values are made up. It leaves out `per_stage_req_latency_seconds` (the reference does not list its stages) and
 * prometheus_client's own process and GC series, so a real page is at least this large.
 *
 * `loaded`: every value moves between two scrapes (a server under steady load, where every latency histogram takes
 * new observations in every bucket above its smallest: the worst case for a table that writes only what changed).
 * Otherwise every value stays as it was (an idle server).
 */
const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
const REQUEST_LABELS = `model_name="${MODEL}"`;
const SCHEDULER_LABELS = `model_name="${MODEL}",engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"`;

const SCHEDULER_GAUGES = [
  'num_running_reqs', 'num_running_reqs_offline_batch', 'num_queue_reqs', 'num_grammar_queue_reqs', 'num_paused_reqs',
  'num_used_tokens', 'max_total_num_tokens', 'token_usage', 'full_token_usage', 'swa_token_usage', 'mamba_usage',
  'pending_prealloc_token_usage', 'gen_throughput', 'cache_hit_rate', 'new_token_ratio', 'decode_sum_seq_lens',
  'utilization', 'num_retracted_reqs', 'spec_accept_length', 'spec_accept_rate', 'num_unique_running_routing_keys',
  'engine_startup_time', 'engine_load_weights_time',
] as const;
const SCHEDULER_COUNTERS = [
  'num_retracted_requests_total', 'num_retracted_input_tokens_total', 'num_retracted_output_tokens_total',
  'num_prefill_retries_total',
] as const;
const REQUEST_COUNTERS = [
  'prompt_tokens_total', 'generation_tokens_total', 'num_requests_total', 'num_so_requests_total', 'num_aborted_requests_total',
] as const;

const HISTOGRAMS: { name: string; labels: string; bounds: readonly number[] }[] = [
  { name: 'time_to_first_token_seconds', labels: REQUEST_LABELS, bounds: [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400] },
  {
    name: 'e2e_request_latency_seconds', labels: REQUEST_LABELS,
    bounds: [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400],
  },
  {
    name: 'inter_token_latency_seconds', labels: REQUEST_LABELS,
    bounds: [0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8],
  },
  {
    name: 'queue_time_seconds', labels: SCHEDULER_LABELS,
    bounds: [
      0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900,
      1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000,
    ],
  },
  { name: 'func_latency_seconds', labels: 'name="generate_request"', bounds: Array.from({ length: 18 }, (_, index) => 0.05 * 1.5 ** index) },
];

/** prometheus_client writes floats: `1.0`, `0.005`. */
function float(value: number): string {
  return Number.isInteger(value) ? `${value}.0` : String(value);
}

/** The page at the `scrapeIndex`-th scrape (0 first); `loaded` makes every value move from one scrape to the next. */
export function sglangMetricsPage(scrapeIndex: number, loaded: boolean): string {
  const step = loaded ? scrapeIndex : 0;
  const lines: string[] = [];
  SCHEDULER_GAUGES.forEach((name, index) => {
    lines.push(`# HELP sglang:${name} ${name.replaceAll('_', ' ')}.`, `# TYPE sglang:${name} gauge`);
    lines.push(`sglang:${name}{${SCHEDULER_LABELS}} ${float(((index + 1) * 7 + step * 3) % 997)}`);
  });
  lines.push('# TYPE sglang:cache_config_info gauge', `sglang:cache_config_info{${SCHEDULER_LABELS},num_pages="461000",page_size="1"} 1.0`);
  SCHEDULER_COUNTERS.forEach((name, index) => {
    lines.push(`# TYPE sglang:${name} counter`, `sglang:${name}{${SCHEDULER_LABELS}} ${float(index + step)}`);
  });
  REQUEST_COUNTERS.forEach((name, index) => {
    lines.push(`# TYPE sglang:${name} counter`, `sglang:${name}{${REQUEST_LABELS}} ${float(1000 * index + 517 * step)}`);
  });
  for (const source of ['device', 'host', 'storage']) {
    lines.push(`sglang:cached_tokens_total{${REQUEST_LABELS},cache_source="${source}"} ${float(31 * step)}`);
  }
  for (const mode of ['prefill_compute', 'prefill_cache', 'decode']) {
    lines.push(`sglang:realtime_tokens_total{${SCHEDULER_LABELS},mode="${mode}"} ${float(211 * step)}`);
  }
  for (const mode of ['cuda_graph', 'non_cuda_graph']) lines.push(`sglang:cuda_graph_passes_total{${SCHEDULER_LABELS},mode="${mode}"} ${float(40 * step)}`);
  for (const component of ['tokenizer', 'scheduler', 'detokenizer']) {
    lines.push(`sglang:process_cpu_seconds_total{component="${component}"} ${float(0.37 * step)}`);
  }
  for (const histogram of HISTOGRAMS) {
    const name = `sglang:${histogram.name}`;
    lines.push(`# HELP ${name} ${histogram.name.replaceAll('_', ' ')}.`, `# TYPE ${name} histogram`);
    // Cumulative counts: under load each scrape adds observations to every bucket (all but the smallest bound).
    histogram.bounds.forEach((bound, index) => {
      lines.push(`${name}_bucket{${histogram.labels},le="${float(bound)}"} ${float(index === 0 ? 0 : index * 10 + step * index)}`);
    });
    const count = histogram.bounds.length * 10 + step * histogram.bounds.length;
    lines.push(`${name}_bucket{${histogram.labels},le="+Inf"} ${float(count)}`);
    lines.push(`${name}_sum{${histogram.labels}} ${float(count * 0.731)}`, `${name}_count{${histogram.labels}} ${float(count)}`);
  }
  return `${lines.join('\n')}\n`;
}
