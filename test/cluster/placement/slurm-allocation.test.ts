import { describe, expect, it } from 'vitest';
import { listenHostArgs } from '../../../src/cluster/placement/listen-host.js';
import { localPlacement } from '../../../src/cluster/placement/local/local-placement.js';
import { parseNodeAddresses } from '../../../src/cluster/placement/slurm/slurm-allocation.js';
import { SlurmPlacement } from '../../../src/cluster/placement/slurm/slurm-placement.js';

describe('a Slurm allocation\'s nodes', () => {
  it('reads each node\'s address from scontrol\'s one-line records, a host name as well as an IP', () => {
    const oneLiners = [
      'NodeName=gpu01 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 NodeAddr=10.1.0.11 NodeHostName=gpu01 Version=22.05.8',
      'NodeName=gpu02 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 NodeAddr=gpu02-ib NodeHostName=gpu02 Version=22.05.8',
      '',
    ].join('\n');
    expect([...parseNodeAddresses(oneLiners)]).toEqual([
      ['gpu01', '10.1.0.11'],
      ['gpu02', 'gpu02-ib'],
    ]);
  });

  it('has servelab\'s own processes listen on the node\'s address, and locally on loopback as before', () => {
    const placement = new SlurmPlacement({ jobId: '7', nodes: ['gpu01', 'gpu02'], addresses: new Map([['gpu01', '10.1.0.11'], ['gpu02', '10.1.0.12']]) }, {});
    expect(listenHostArgs(placement, 'gpu02')).toEqual(['--host', '10.1.0.12']);
    expect(listenHostArgs(placement, undefined)).toEqual(['--host', '10.1.0.11']);
    expect(listenHostArgs(localPlacement, undefined)).toEqual([]);
  });
});
