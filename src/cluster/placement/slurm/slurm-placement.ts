import { ServelabError } from '../../../errors/servelab-error.js';
import type { PlacedProcess, PlacementRequest, ProcessPlacement } from '../../../types/cluster.js';
import { remoteChildEnv } from '../../process/child-env.js';
import { SupervisedProcess } from '../../process/supervised-process.js';
import { readSlurmAllocation, type SlurmAllocation } from './slurm-allocation.js';
import { slurmCommand, slurmVariables } from './slurm-commands.js';
import { SlurmProcess } from './slurm-process.js';
import { STEP_WRAPPER } from './step-wrapper.js';

/** A step's default grace between SIGTERM and SIGKILL, as the local placement's. */
const DEFAULT_STOP_GRACE_MS = 5_000;

/**
 * Job steps in the allocation servelab runs in (docs/slurm.md): `spawn` on a node is `srun --overlap --nodelist NODE
 * --ntasks 1 --jobid $SLURM_JOB_ID ...`. `--overlap` lets steps share the allocation's resources, so servers, the
 * router and load generators can sit on one node. The default node is the allocation's first.
 *
 * A compute node runs what it is given by path: Node and servelab at the same paths as here (a shared file system or
 * the same install), and SGLang for that target.
 */
export class SlurmPlacement implements ProcessPlacement {
  readonly name = 'slurm';

  /** `env`: the environment Slurm's clients read (SLURM_CONF, SLURM_JOB_ID, ...); servelab's own by default. */
  constructor(
    readonly allocation: SlurmAllocation,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** The allocation's nodes, in Slurm's order. */
  get nodes(): readonly string[] {
    return this.allocation.nodes;
  }

  spawn(request: PlacementRequest): PlacedProcess {
    const node = this.#node(request.node);
    // srun runs with servelab's environment less the secrets (childEnv: never the API key) plus `env`, and exports
    // all of it to the step (--export=ALL): a list in --export itself would break on values holding commas.
    const srun = new SupervisedProcess({
      name: request.name,
      command: 'srun',
      args: [...this.#stepArgs(node, request.name), 'sh', '-c', STEP_WRAPPER, 'sh', request.command, ...request.args],
      env: remoteChildEnv({ ...slurmVariables(this.env), ...(request.env ?? {}), ...gpuChoice(request.env) }),
      logPath: request.logPath,
      // srun itself, when the step never started: a second SIGINT-like stop is quick.
      stopGraceMs: 2_000,
    });
    return new SlurmProcess(srun, this.hostOf(node), remoteChildEnv(slurmVariables(this.env)), request.stopGraceMs ?? DEFAULT_STOP_GRACE_MS);
  }

  /** Asks the node: a one-line step binds port 0 on the node's address and prints the port it got. */
  async freePort(node?: string): Promise<number> {
    const where = this.#node(node);
    const script = 'const s = require("node:net").createServer(); s.listen(0, process.argv[1], () => { console.log(s.address().port); s.close(); });';
    const printed = await this.#oneLineStep(where, 'free-port', [process.execPath, '-e', script, this.hostOf(where)]);
    const port = Number(printed.trim().split('\n').pop());
    if (!Number.isInteger(port) || port <= 0) throw new ServelabError('UNREACHABLE', `node ${where} did not report a free port (it printed "${printed.trim()}"); check that Node runs there at ${process.execPath}`);
    return port;
  }

  /** Asks the node whether something listens on `port` at its address. */
  async assertPortFree(port: number, flag: string, node?: string): Promise<void> {
    const where = this.#node(node);
    const host = this.hostOf(where);
    const script = 'const s = require("node:net").createServer(); s.once("error", () => console.log("in use")); s.listen({ port: Number(process.argv[2]), host: process.argv[1], exclusive: true }, () => { console.log("free"); s.close(); });';
    const printed = await this.#oneLineStep(where, 'port-check', [process.execPath, '-e', script, host, String(port)]);
    if (printed.trim().split('\n').pop() !== 'free') {
      throw new ServelabError('PORT_IN_USE', `port ${port} on node ${where} (${host}) is already in use; stop what listens there or choose another port with ${flag}`);
    }
  }

  hostOf(node?: string): string {
    return this.allocation.addresses.get(this.#node(node)) ?? this.#node(node);
  }

  #stepArgs(node: string, name: string): string[] {
    // --nodes and --ntasks stated: the allocation's own SLURM_NNODES / SLURM_NTASKS in the environment would otherwise
    // ask for a step on every node.
    return ['--overlap', `--jobid=${this.allocation.jobId}`, `--nodelist=${node}`, '--nodes=1', '--ntasks=1', `--job-name=${name}`, '--export=ALL', '--quiet'];
  }

  #oneLineStep(node: string, name: string, command: string[]): Promise<string> {
    return slurmCommand('srun', [...this.#stepArgs(node, `servelab ${name}`), ...command], remoteChildEnv(slurmVariables(this.env)));
  }

  #node(node: string | undefined): string {
    const first = this.allocation.nodes[0];
    if (node === undefined && first !== undefined) return first;
    if (node !== undefined && this.allocation.nodes.includes(node)) return node;
    throw new ServelabError('INVALID_CONFIG', `node "${node ?? ''}" is not in this Slurm allocation (job ${this.allocation.jobId}: ${this.allocation.nodes.join(', ')}); name one of its nodes`);
  }
}

/** The placement for the allocation `env` describes (SLURM_JOB_ID, SLURM_JOB_NODELIST): INVALID_CONFIG outside one. */
export async function openSlurmPlacement(env: NodeJS.ProcessEnv = process.env): Promise<SlurmPlacement> {
  return new SlurmPlacement(await readSlurmAllocation(env), env);
}

/** The GPUs servelab chose for a process, under a name Slurm leaves alone: the step wrapper sets them last. */
function gpuChoice(env: Record<string, string> | undefined): Record<string, string> {
  const devices = env?.['CUDA_VISIBLE_DEVICES'];
  return devices === undefined ? {} : { SERVELAB_CUDA_VISIBLE_DEVICES: devices };
}
