import { describe, expect, it } from 'vitest';
import { localPlacement } from '../../src/cluster/placement/local/local-placement.js';
import { ServelabError } from '../../src/errors/servelab-error.js';
import { choosePlacement, nodeGroups, spreadClients, spreadServers } from '../../src/orchestration/launcher-choice.js';

describe('where a run places its servers', () => {
  it('spreads servers over every node, or over as few as hold them at --gpus-per-node', () => {
    expect(spreadServers(['n1', 'n2', 'n3'], 3, undefined)).toEqual(['n1', 'n2', 'n3']);
    expect(spreadServers(['n1', 'n2', 'n3'], 2, undefined)).toEqual(['n1', 'n2']);
    expect(spreadServers(['n1', 'n2', 'n3'], 8, 4)).toEqual(['n1', 'n2']);
    expect(spreadServers(['n1', 'n2', 'n3'], 9, 4)).toEqual(['n1', 'n2', 'n3']);
  });

  it('puts load generators on the nodes without a server first, then from the last node back', () => {
    expect(spreadClients(['n1', 'n2', 'n3', 'n4'], ['n1', 'n2'], 2)).toEqual(['n3', 'n4']);
    expect(spreadClients(['n1', 'n2', 'n3', 'n4'], ['n1', 'n2', 'n3'], 2)).toEqual(['n4', 'n3']);
    expect(spreadClients(['n1', 'n2', 'n3'], ['n1', 'n2', 'n3'], 2)).toEqual(['n3', 'n2']);
    expect(spreadClients(['n1', 'n2'], ['n1'], 5)).toEqual(['n2', 'n1']);
    expect(spreadClients(['n1', 'n2', 'n3'], ['n1'], 1)).toEqual([]);
  });

  it('refuses more servers than the allocation holds at --gpus-per-node, naming its nodes', () => {
    expect(() => spreadServers(['n1', 'n2'], 5, 2)).toThrow(/5 servers at --gpus-per-node 2 need 3 nodes, and the allocation has 2 \(n1, n2\)/);
  });

  it('gives each server spanning nodes its own consecutive nodes, rank 0 first, and refuses too few', () => {
    expect(nodeGroups(['n1', 'n2', 'n3', 'n4'], 2, 2)).toEqual([['n1', 'n2'], ['n3', 'n4']]);
    expect(() => nodeGroups(['n1', 'n2', 'n3'], 2, 2)).toThrow(/2 servers of --nnodes 2 need 4 nodes, and the allocation has 3/);
  });

  it('runs locally by default, and refuses --launcher slurm outside an allocation, naming salloc', async () => {
    expect((await choosePlacement({}, 3, {}, {})).placement).toBe(localPlacement);
    const error: unknown = await choosePlacement({ launcher: 'slurm' }, 3, {}, { PATH: process.env['PATH'] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServelabError);
    expect((error as ServelabError).code).toBe('INVALID_CONFIG');
    expect((error as Error).message).toMatch(/not inside one \(SLURM_JOB_ID is not set\).*salloc/);
  });

  it('keeps the placement and nodes a library caller gave', async () => {
    const chosen = await choosePlacement({ launcher: 'slurm' }, 3, { placement: localPlacement, serverNodes: ['localhost'] }, {});
    expect(chosen).toEqual({ placement: localPlacement, serverNodes: ['localhost'] });
  });
});
