import { clientFlags, outputFlags, serverFlags, targetFlags, workloadFlags } from './node-test-flags.js';
import { parseInteger, parseJson, parseNumber, type FlagSpec } from './option-table.js';

const ROUTING = 'Routing:';

export const routingFlags: FlagSpec[] = [
  { flag: 'num-gpus', key: 'numGpus', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '4', group: ROUTING, description: 'number of servers behind the router (one per GPU). Simulated servers are processes on this machine, refused beyond the tightest of: 40 MiB of memory each, 16 per core, 8 file descriptors each plus 256 within ulimit -n, 12 threads each within ulimit -u (--virtual-time has no such bound)' },
  { flag: 'router', key: 'router', kind: 'value', valueName: 'kind', choices: ['builtin', 'smg', 'sglang-router', 'nginx'], defaultText: 'builtin', group: ROUTING, description: 'builtin: servelab\'s router; smg: SGLang\'s router (smg launch, or python -m smg.launch_router); sglang-router: its 0.3.x predecessor (python -m sglang_router.launch_router); nginx: Debian\'s nginx' },
  { flag: 'routing-policy', key: 'routingPolicy', kind: 'value', valueName: 'name|module', defaultText: 'cache_aware', group: ROUTING, description: 'cache_aware, round_robin, random, power_of_two, shortest_queue, least_load, prefix_hash, consistent_hashing, or a module path (builtin); any smg policy (smg); round_robin or least_conn (nginx)' },
  { flag: 'worker-urls', key: 'workerUrls', kind: 'value', valueName: 'url', repeatable: true, group: ROUTING, description: 'attach: servers that already run, behind a router servelab starts (repeat for each)' },
  { flag: 'base-port', key: 'basePort', kind: 'value', valueName: 'port', parse: parseInteger, defaultText: '30001', group: ROUTING, description: 'sglang: server i listens on base-port + i' },
  { flag: 'router-port', key: 'routerPort', kind: 'value', valueName: 'port', parse: parseInteger, defaultText: 'any free port', group: ROUTING, description: 'port of the router servelab starts' },
  { flag: 'taps', key: 'taps', kind: 'negatable', group: ROUTING, description: 'measure without tracing: no taps in front of the servers, and the builtin router keeps no trace (no router_send_time or host per request)' },
  { flag: 'collect-per-node-metrics', key: 'collectPerNodeMetrics', kind: 'negatable', group: ROUTING, description: 'do not scrape each server\'s /metrics during the run' },
  { flag: 'failure-schedule', key: 'failureSchedule', kind: 'value', valueName: 'json', parse: parseJson, group: ROUTING, description: 'seconds -> failed nodes from then on, e.g. \'{"2": [1], "5": []}\' (node 1 crashes at 2 s, all restored at 5 s); or a list of {"atS", "action": crash|hang|drain|restore, "nodes"}' },
  { flag: 'max-retries', key: 'maxRetries', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '4', group: ROUTING, description: 'builtin router: retries on another worker when one refuses the connection (5 attempts, as sglang-router)' },
  { flag: 'pd-disaggregation', key: 'pdDisaggregation', kind: 'boolean', group: ROUTING, description: 'prefill/decode disaggregation: --num-prefill prefill servers and --num-decode decode servers (sim or sglang; attach: --prefill-url, --decode-url) behind the builtin router, smg or sglang-router in PD mode; each request goes to a pair, with a bootstrap room, as smg does' },
  { flag: 'num-prefill', key: 'numPrefill', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1', group: ROUTING, description: 'with --pd-disaggregation: prefill servers' },
  { flag: 'num-decode', key: 'numDecode', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: '1', group: ROUTING, description: 'with --pd-disaggregation: decode servers' },
  { flag: 'prefill-policy', key: 'prefillPolicy', kind: 'value', valueName: 'name', group: ROUTING, description: "with --pd-disaggregation: policy choosing the prefill server (smg's --prefill-policy; default: --routing-policy)" },
  { flag: 'kv-transfer-bandwidth', key: 'kvTransferBandwidth', kind: 'value', valueName: 'rate', group: ROUTING, description: "with --pd-disaggregation (sim): the KV link's bandwidth per prefill server, shared by its transfers in flight, e.g. 25GB/s or 200Gbit/s (default: the profile's kvTransfer, else 25GB/s, an assumption)" },
  { flag: 'kv-transfer-latency-ms', key: 'kvTransferLatencyMs', kind: 'value', valueName: 'ms', parse: parseNumber, group: ROUTING, description: "with --pd-disaggregation (sim): fixed time each KV transfer adds (default: the profile's kvTransfer, else 0.5 ms, an assumption)" },
  { flag: 'decode-policy', key: 'decodePolicy', kind: 'value', valueName: 'name', group: ROUTING, description: "with --pd-disaggregation: policy choosing the decode server (smg's --decode-policy; default: --routing-policy)" },
  { flag: 'prefill-url', key: 'prefillUrls', kind: 'value', valueName: 'url[,port|none]', repeatable: true, group: ROUTING, description: "with --pd-disaggregation --target attach: a running prefill server and its bootstrap port (smg's --prefill URL [BOOTSTRAP_PORT|none]; none when left out); repeat for each" },
  { flag: 'decode-url', key: 'decodeUrls', kind: 'value', valueName: 'url', repeatable: true, group: ROUTING, description: 'with --pd-disaggregation --target attach: a running decode server; repeat for each' },
  { flag: 'disaggregation-transfer-backend', key: 'disaggregationTransferBackend', kind: 'value', valueName: 'name', defaultText: 'mooncake (SGLang\'s)', group: ROUTING, description: "with --pd-disaggregation --target sglang: SGLang's --disaggregation-transfer-backend (mooncake, nixl, ...) on every server" },
  { flag: 'disaggregation-bootstrap-port', key: 'disaggregationBootstrapPort', kind: 'value', valueName: 'port', parse: parseInteger, defaultText: '8998', group: ROUTING, description: "with --pd-disaggregation --target sglang: prefill server i's --disaggregation-bootstrap-port is this + i" },
  { flag: 'router-prometheus-port', key: 'routerPrometheusPort', kind: 'value', valueName: 'port', parse: parseInteger, group: ROUTING, description: 'smg or sglang-router: its Prometheus port (default: a free one)' },
];

/** In a routing test, --url names the router, not a server. */
const routingTargetFlags: FlagSpec[] = targetFlags.map((spec) =>
  spec.flag === 'url' ? { ...spec, description: 'attach: the running router, e.g. http://127.0.0.1:30000 (servers behind a router servelab starts: --worker-urls)' } : spec,
);

export const routingTestFlags: FlagSpec[] = [...routingTargetFlags, ...routingFlags, ...serverFlags, ...workloadFlags, ...clientFlags, ...outputFlags];
