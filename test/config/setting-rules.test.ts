import { describe, expect, it } from 'vitest';
import { resolveNodeTestConfig } from '../../src/config/node-test-config.js';
import { resolveRoutingTestConfig } from '../../src/config/routing-test-config.js';

describe('request rate', () => {
  it('accepts Infinity in every spelling a user or a config.json may use', () => {
    for (const value of [Infinity, 'inf', 'Infinity', 'INF']) expect(resolveNodeTestConfig({ requestRate: value }).requestRate).toBe(Infinity);
    expect(resolveNodeTestConfig({ requestRate: 12.5 }).requestRate).toBe(12.5);
    expect(() => resolveNodeTestConfig({ requestRate: 0 })).toThrow(/--request-rate.*above 0, or inf/);
  });
});

describe('settings that would be silently ignored are refused', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['burstiness without gamma arrivals', { burstiness: 0.2 }, /--burstiness shapes gamma arrivals only; add --arrival gamma/],
    ['an independent draw for constant arrivals', { arrival: 'constant', arrivalDraw: 'independent' }, /--arrival-draw independent draws poisson or gamma gaps at one rate; the constant process draws none/],
    ['an independent draw for staged load', { stages: [{ durationS: 1, rate: 5 }], arrivalDraw: 'independent' }, /staged load draws independent gaps already/],
    ['a trace file without trace arrivals', { tracePath: 'trace.csv' }, /--trace-path applies to trace replay only/],
    ['shared-prefix lengths for the random dataset', { gspNumGroups: 4 }, /--gsp-num-groups applies to --dataset-name shared-prefix, not random/],
    ['random lengths for the shared-prefix dataset', { datasetName: 'shared-prefix', randomInputLen: 100 }, /--random-input-len applies to --dataset-name random or random-ids/],
    ['a rate for a closed loop', { concurrency: 4, requestRate: 10 }, /a closed loop .* has none/],
    ['a rate beside rate stages', { stages: [{ durationS: 1, rate: 5 }], requestRate: 10 }, /stages' rates apply/],
    ['token ids over chat completions', { datasetName: 'random-ids', protocol: 'openai-chat' }, /cannot take/],
    ['virtual time over an OpenAI protocol', { virtualTime: true, protocol: 'openai-completions' }, /--virtual-time simulates SGLang's native protocol/],
    ['virtual time without streaming', { virtualTime: true, stream: false }, /drop --no-stream/],
    ['a sensitivity band in real time, which has none', { twinSensitivity: 2 }, /--twin-sensitivity sizes the sensitivity band a --virtual-time run adds; a real-time run has none/],
    ['no sensitivity band in real time, which has none anyway', { twinSensitivity: 'off' }, /--twin-sensitivity sizes the sensitivity band a --virtual-time run adds/],
    ['stopping at EOS on the simulated engine, which has no EOS', { ignoreEos: false }, /--no-ignore-eos .* the simulated engine has none/],
    ['Slurm placement in virtual time, which launches nothing', { launcher: 'slurm', virtualTime: true }, /--virtual-time launches nothing, so there is nothing for --launcher slurm to place/],
    ['Slurm placement for an attached server', { launcher: 'slurm', target: 'attach', url: 'http://127.0.0.1:1' }, /--target attach launches no server/],
    ['a multi-node server on the simulated engine', { nnodes: 2, launcher: 'slurm' }, /--nnodes 2 spans one SGLang server over nodes of a Slurm allocation; it needs --target sglang and --launcher slurm/],
    ['a multi-node server without Slurm', { nnodes: 2, target: 'sglang', modelPath: 'm' }, /it needs --target sglang and --launcher slurm/],
    ['servers per node beside servers spanning nodes', { nnodes: 2, target: 'sglang', modelPath: 'm', launcher: 'slurm', gpusPerNode: 2 }, /--nnodes gives each server whole nodes/],
    ['servers per node without Slurm', { gpusPerNode: 2 }, /--gpus-per-node says how many servers share a Slurm node; add --launcher slurm/],
    ['stopping at EOS in virtual time', { ignoreEos: false, target: 'attach', url: 'http://127.0.0.1:1', virtualTime: true }, /--no-ignore-eos/],
    ['load generators for a closed loop', { clientNodes: 2, concurrency: 4, requestRate: undefined }, /--client-nodes spreads an open loop/],
    ['load generators in virtual time', { clientNodes: 2, virtualTime: true }, /--virtual-time has no real client to spread/],
    ['worker threads inside load generators', { clientNodes: 2, clientWorkers: 2 }, /one thread per load generator/],
    ['a concurrency cap smaller than the load generators', { clientNodes: 3, maxConcurrency: 2 }, /--max-concurrency 2 is split over 3 load generators/],
  ];
  for (const [what, settings, message] of cases) {
    it(what, () => expect(() => resolveNodeTestConfig(settings)).toThrow(message));
  }

  it('lets --no-ignore-eos through against a real server', () => {
    expect(resolveNodeTestConfig({ ignoreEos: false, target: 'attach', url: 'http://127.0.0.1:1' }).ignoreEos).toBe(false);
  });

  it('routing: nginx round-robins unless told least_conn, refuses builtin policies and drains', () => {
    expect(resolveRoutingTestConfig({ router: 'nginx' }).routingPolicy).toBe('round_robin');
    expect(resolveRoutingTestConfig({ router: 'nginx', routingPolicy: 'least_conn' }).routingPolicy).toBe('least_conn');
    expect(() => resolveRoutingTestConfig({ router: 'nginx', routingPolicy: 'cache_aware' })).toThrow(/nginx balances by round_robin or least_conn, not cache_aware/);
    expect(() => resolveRoutingTestConfig({ router: 'nginx', failureSchedule: [{ atS: 1, action: 'drain', nodes: [0] }] })).toThrow(/nginx cannot remove workers/);
  });

  it('routing: virtual time refuses what it does not simulate', () => {
    expect(() => resolveRoutingTestConfig({ virtualTime: true, router: 'nginx', routingPolicy: 'round_robin' })).toThrow(/drop --router nginx/);
    expect(() => resolveRoutingTestConfig({ virtualTime: true, failureSchedule: { '1': [0] } })).toThrow(/does not simulate node failures/);
  });

  it('defaults never trigger a rule', () => {
    expect(() => resolveNodeTestConfig({})).not.toThrow();
    expect(() => resolveRoutingTestConfig({ datasetName: 'shared-prefix' })).not.toThrow();
  });
});

describe('arrival draw', () => {
  it('is conditioned by default, takes independent (arrival_draw too) and refuses anything else', () => {
    expect(resolveNodeTestConfig({}).arrivalDraw).toBe('conditioned');
    expect(resolveNodeTestConfig({ arrivalDraw: 'independent' }).arrivalDraw).toBe('independent');
    expect(resolveNodeTestConfig({ arrival_draw: 'independent', arrival: 'gamma' }).arrivalDraw).toBe('independent');
    expect(() => resolveNodeTestConfig({ arrivalDraw: 'uniform' })).toThrow(/arrival-draw|arrivalDraw/);
  });
});
