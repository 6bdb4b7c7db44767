import { localPlacement } from '../cluster/placement/local/local-placement.js';
import { insideSlurmAllocation } from '../cluster/placement/slurm/slurm-allocation.js';
import { openSlurmPlacement } from '../cluster/placement/slurm/slurm-placement.js';
import type { NodeTestConfig } from '../config/schema.js';
import { ServelabError } from '../errors/servelab-error.js';
import type { ProcessPlacement } from '../types/cluster.js';
import type { RunOptions } from './measured-run.js';

/** Where a run's processes go: the placement, and the node of each server (absent: the placement's default). */
export interface ChosenPlacement {
  placement: ProcessPlacement;
  serverNodes?: readonly string[];
  /** For servers that span nodes (`nnodes`): server i's nodes, rank 0's first (its first is `serverNodes[i]`). */
  serverNodeGroups?: readonly (readonly string[])[];
  /** Where the load-generator processes run (`clientNodes` > 1): generator i on `clientNodes[i % n]`. */
  clientNodes?: readonly string[];
}

/**
 * The placement a run uses: the library's own (`options.placement`) when given, else the configuration's `launcher`:
 * this host by default, or job steps of the Slurm allocation servelab runs in. Outside an allocation a `--launcher
 * slurm` run never gets here: MeasuredTest.run() submits it as a batch job first (src/cluster/slurm-jobs/); a caller
 * that does reach here so is refused, naming both ways.
 */
export async function choosePlacement(config: Pick<NodeTestConfig, 'launcher' | 'gpusPerNode' | 'nnodes'> & { clientNodes?: number }, serverCount: number, options: RunOptions, env: NodeJS.ProcessEnv = process.env): Promise<ChosenPlacement> {
  const given = {
    ...(options.serverNodes === undefined ? {} : { serverNodes: options.serverNodes }),
    ...(options.clientNodes === undefined ? {} : { clientNodes: options.clientNodes }),
  };
  if (options.placement !== undefined) return { placement: options.placement, ...given };
  if (config.launcher !== 'slurm') return { placement: localPlacement, ...given };
  if (!insideSlurmAllocation(env)) {
    throw new ServelabError('INVALID_CONFIG', '--launcher slurm places servers as job steps of the Slurm allocation servelab runs in, and this is not inside one (SLURM_JOB_ID is not set): run the test through NodeTest/RoutingTest run() or the command line, which submit a batch job from here, or start servelab inside an allocation, e.g. salloc --nodes 3 --time 30');
  }
  const placement = await openSlurmPlacement(env);
  if (config.nnodes !== undefined && config.nnodes > 1) {
    const groups = nodeGroups(placement.nodes, serverCount, config.nnodes);
    const clientNodes = options.clientNodes ?? spreadClients(placement.nodes, groups.flat(), config.clientNodes ?? 1);
    return { placement, serverNodes: groups.map((group) => group[0] as string), serverNodeGroups: groups, clientNodes };
  }
  const serverNodes = options.serverNodes ?? spreadServers(placement.nodes, serverCount, config.gpusPerNode);
  return { placement, serverNodes, clientNodes: options.clientNodes ?? spreadClients(placement.nodes, serverNodes, config.clientNodes ?? 1) };
}

/**
 * The nodes the load generators run on: the allocation's nodes that hold no server first (a generator beside a server
 * takes its CPU, and the client's own timing suffers with it), then, when the allocation has too few of those, the
 * nodes from the last back. One generator (the default) sends from the coordinator's own process, so no node is picked.
 */
export function spreadClients(nodes: readonly string[], serverNodes: readonly string[], generatorCount: number): string[] {
  if (generatorCount <= 1) return [];
  const free = nodes.filter((node) => !serverNodes.includes(node));
  const fallback = [...nodes].reverse().filter((node) => !free.includes(node));
  return [...free, ...fallback].slice(0, Math.min(generatorCount, nodes.length));
}

/**
 * The nodes the servers run on, in the order they are used round-robin (server i on `nodes[i % n]`): every node of the
 * allocation, or with `gpusPerNode` as few as hold the servers at that many a node. Too many servers for the
 * allocation is INVALID_CONFIG, before anything starts.
 */
export function spreadServers(nodes: readonly string[], serverCount: number, gpusPerNode: number | undefined): string[] {
  if (gpusPerNode === undefined) return nodes.slice(0, Math.min(nodes.length, serverCount));
  const needed = Math.ceil(serverCount / gpusPerNode);
  if (needed > nodes.length) {
    throw new ServelabError('INVALID_CONFIG', `${serverCount} servers at --gpus-per-node ${gpusPerNode} need ${needed} nodes, and the allocation has ${nodes.length} (${nodes.join(', ')}); ask salloc for more nodes, or lower --num-gpus`);
  }
  return nodes.slice(0, needed);
}

/** Servers that span `nnodes` nodes each: server i takes nodes i*nnodes ... i*nnodes+nnodes-1, one rank a node. */
export function nodeGroups(nodes: readonly string[], serverCount: number, nnodes: number): string[][] {
  if (serverCount * nnodes > nodes.length) {
    throw new ServelabError('INVALID_CONFIG', `${serverCount} servers of --nnodes ${nnodes} need ${serverCount * nnodes} nodes, and the allocation has ${nodes.length} (${nodes.join(', ')}); ask salloc for more nodes, or lower --num-gpus or --nnodes`);
  }
  return Array.from({ length: serverCount }, (_, index) => nodes.slice(index * nnodes, (index + 1) * nnodes));
}
