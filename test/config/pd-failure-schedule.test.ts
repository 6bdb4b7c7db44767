import { describe, expect, it } from 'vitest';
import { resolveRoutingTestConfig } from '../../src/config/routing-test-config.js';

const pd = { target: 'sim', pdDisaggregation: true, numPrefill: 2, numDecode: 2 } as const;

describe('failure schedules in a PD routing test', () => {
  it('takes a schedule on the prefill and decode servers, numbered prefill first (2P2D: nodes 0-3)', () => {
    const config = resolveRoutingTestConfig({ ...pd, failureSchedule: [{ atS: 1, action: 'crash', nodes: [0, 3] }, { atS: 2, action: 'drain', nodes: [2] }, { atS: 3, action: 'restore', nodes: [] }] });
    expect(config.numGpus).toBe(4);
    expect(config.failureSchedule).toHaveLength(3);
  });

  it('refuses a node beyond the cluster, naming which numbers prefill and which decode', () => {
    expect(() => resolveRoutingTestConfig({ ...pd, numPrefill: 1, failureSchedule: { '1': [3] } })).toThrow('nodes are numbered 0 to 2 (node 0 prefills, nodes 1-2 decode)');
  });

  it('refuses a drain behind smg, whose worker API cannot take a server back in its PD role', () => {
    expect(() => resolveRoutingTestConfig({ ...pd, router: 'smg', routingPolicy: 'round_robin', failureSchedule: [{ atS: 1, action: 'drain', nodes: [1] }] })).toThrow(/drains node\(s\) 1 of a PD cluster, but smg cannot/);
    // Crashes and hangs act on the servers' processes, whatever the router.
    expect(resolveRoutingTestConfig({ ...pd, router: 'smg', routingPolicy: 'round_robin', failureSchedule: { '1': [1] } }).numGpus).toBe(4);
  });
});
