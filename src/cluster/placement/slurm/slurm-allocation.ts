import { ServelabError } from '../../../errors/servelab-error.js';
import { slurmCommand } from './slurm-commands.js';

/** The allocation servelab runs in: its job id and its nodes, in Slurm's order, each with the address Slurm reaches it at. */
export interface SlurmAllocation {
  jobId: string;
  /** Node names as Slurm knows them (SLURMD_NODENAME), first node first. */
  nodes: string[];
  /** Each node's NodeAddr (`scontrol show node`): where Slurm itself reaches it, so where its processes are reached. */
  addresses: Map<string, string>;
}

/**
 * Whether servelab runs inside a Slurm allocation (under `salloc`, in a batch script, in a step): SLURM_JOB_ID is set.
 * The one place that decides it; elsewhere (a login node) `--launcher slurm` submits a job (src/cluster/slurm-jobs/).
 */
export function insideSlurmAllocation(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env['SLURM_JOB_ID'] ?? '').trim() !== '';
}

/** Reads the allocation from `env` (SLURM_JOB_ID, SLURM_JOB_NODELIST) and asks Slurm for its nodes' addresses. */
export async function readSlurmAllocation(env: NodeJS.ProcessEnv = process.env): Promise<SlurmAllocation> {
  const jobId = env['SLURM_JOB_ID'];
  if (jobId === undefined || jobId === '' || !insideSlurmAllocation(env)) {
    throw new ServelabError('INVALID_CONFIG', 'the Slurm launcher runs inside a Slurm allocation, and SLURM_JOB_ID is not set here: start servelab inside one (salloc --nodes N ..., then servelab ... --launcher slurm), or use --launcher local');
  }
  const nodeList = env['SLURM_JOB_NODELIST'] ?? env['SLURM_NODELIST'];
  if (nodeList === undefined || nodeList === '') {
    throw new ServelabError('INVALID_CONFIG', `SLURM_JOB_ID is ${jobId} but SLURM_JOB_NODELIST is not set: run servelab from the allocation's own shell (salloc) or batch script, where Slurm sets both`);
  }
  // Slurm's compressed form (gpu[01-04,07]) expanded by Slurm itself.
  const nodes = (await slurmCommand('scontrol', ['show', 'hostnames', nodeList], env)).split('\n').map((line) => line.trim()).filter((line) => line !== '');
  if (nodes.length === 0) throw new ServelabError('INVALID_CONFIG', `SLURM_JOB_NODELIST (${nodeList}) names no node; run servelab inside an allocation that holds nodes`);
  // Nothing may outlive the run by more than the allocation's own limit: an allocation without one is refused.
  const timeLimit = (await slurmCommand('squeue', ['--noheader', '--jobs', jobId, '--format=%l'], env)).trim();
  if (timeLimit === 'UNLIMITED' || timeLimit === 'INFINITE') {
    throw new ServelabError('INVALID_CONFIG', `Slurm job ${jobId} has no time limit, so a step servelab could not end would run for ever: start the allocation with one (salloc --time 60 ...)`);
  }
  const addresses = parseNodeAddresses(await slurmCommand('scontrol', ['show', 'node', '--oneliner', nodes.join(',')], env));
  for (const node of nodes) if (!addresses.has(node)) addresses.set(node, node);
  return { jobId, nodes, addresses };
}

/** `NodeName=n1 ... NodeAddr=10.0.0.7 ...`, one node a line, as a map from name to address. */
export function parseNodeAddresses(oneLiners: string): Map<string, string> {
  const addresses = new Map<string, string>();
  for (const line of oneLiners.split('\n')) {
    const name = /(?:^|\s)NodeName=(\S+)/.exec(line)?.[1];
    const address = /(?:^|\s)NodeAddr=(\S+)/.exec(line)?.[1];
    if (name !== undefined && address !== undefined) addresses.set(name, address);
  }
  return addresses;
}
