import { execFile } from 'node:child_process';
import { chown, mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile, chmod } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePortRun } from './free-port-run.js';
import { SupervisedProcess } from '../../src/cluster/process/supervised-process.js';
import { requireTool } from './require-tool.js';

const run = promisify(execFile);

/**
 * A real multi-node Slurm on this one machine, for tests: munged, slurmctld and one `slurmd -D -N nX` per node, every
 * node with the same NodeHostname (this host), NodeAddr 127.0.0.1 and a port of its own. Everything it needs lives in
 * a fresh temporary directory, with ports chosen free at start and its own munge socket, so several clusters (several
 * test files, other people's tests) can run at once without meeting. Commands reach it through `env` (`SLURM_CONF`).
 *
 * Settings as Debian's own samples have them, without cgroups (proctrack/linuxproc, task/none, no accounting: `sacct`
 * answers nothing here, use `squeue` and `scontrol`); `bf_interval=1` so heterogeneous jobs (started only by the
 * backfill scheduler) start within a second; `config_overrides` so the nodes may claim more CPUs than the machine has.
 */
export interface SlurmTestCluster {
  /** The temporary directory holding slurm.conf, state, spool and logs (removed by `stop`). */
  readonly directory: string;
  readonly confPath: string;
  /** The node names, `n1` ... `nK`. */
  readonly nodes: readonly string[];
  /** `process.env` plus `SLURM_CONF` for this cluster: the environment Slurm's commands need to reach it. */
  readonly env: NodeJS.ProcessEnv;
  /** Runs a Slurm command (`squeue`, `scontrol`, ...) against this cluster; resolves with its stdout. */
  command(program: string, args: string[]): Promise<string>;
  /**
   * What `salloc` does before it starts a shell: an allocation of `nodeCount` nodes (`salloc --no-shell`), with a time
   * limit (null: none, the partition's unlimited). The environment a shell inside it would have: SLURM_CONF,
   * SLURM_JOB_ID and SLURM_JOB_NODELIST. `exclusive`: the whole nodes (`--exclusive`), so that no other job fits
   * beside it; without it the allocation takes one CPU a node of 16 (select/cons_tres, CR_CPU) and other jobs run there too.
   */
  allocate(nodeCount: number, timeLimitMinutes?: number | null, options?: { exclusive?: boolean }): Promise<SlurmAllocation>;
  /** Job steps still running in this cluster (`squeue --steps`), as `JOBID.STEPID`. */
  runningSteps(): Promise<string[]>;
  /** Ends every job, every daemon it started (by process id) and removes the directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface SlurmAllocation {
  jobId: string;
  nodeList: string;
  env: NodeJS.ProcessEnv;
}

const SLURM_PACKAGES = 'slurmctld slurmd slurm-client munge';

/**
 * Why this machine cannot run a test Slurm cluster, or undefined when it can: the daemons and clients must run, and
 * servelab must be root (slurmd runs job steps as their user; munged is started as the munge user).
 */
export const slurmMissing = (): string | undefined =>
  requireTool('Slurm and munge (as root)', SLURM_PACKAGES, {
    command: 'sh',
    // Slurm's clients answer even --version only with a configuration to read: their presence is checked instead.
    args: ['-c', 'test "$(id -u)" = 0 && id -u munge && test -r /etc/munge/munge.key && slurmctld -V && slurmd -V && munged -V && for c in srun salloc sinfo squeue scancel scontrol; do command -v $c || exit 1; done'],
  });

/** How long the daemons may take to report every node idle. */
const READY_TIMEOUT_MS = 30_000;
/** How long the jobs may take to end at teardown before their step daemons are killed by process id. */
const JOBS_END_TIMEOUT_MS = 10_000;

export interface SlurmTestClusterOptions {
  /**
   * What Slurm sets CUDA_VISIBLE_DEVICES to in every task, over what srun exported, as it does in a step holding GPUs
   * on a site with GPUs (here through a TaskProlog, the test machine having none). Absent: Slurm leaves it alone.
   */
  stepGpus?: string;
  /**
   * Nodes whose clock is shifted, by node name: the offset as Debian's faketime takes it (`+5s`, `-250ms`). That
   * node's slurmd runs under `faketime -f OFFSET`, so what it starts (slurmstepd, the steps' tasks) reads the shifted
   * wall clock, as processes on a host whose clock is off would. Check `faketimeMissing()` before asking for one.
   */
  shiftedClocks?: Readonly<Record<string, string>>;
  /**
   * Each node at an address of its own, as on a real cluster: every slurmd runs in a network namespace of its own
   * (`nsenter --net=/run/netns/NAME`), joined to this host by a bridge; this host is the subnet's `.1` (slurmctld and
   * servelab), node i is `.(10 + i)`. Needs root and iproute2 (`ipMissing()`). No default route inside the namespaces
   * and a blackhole route for the subnet on this host keep every packet on this machine.
   */
  distinctAddresses?: boolean;
}

/** Brings up a cluster of `nodeCount` nodes; resolves once every node is idle. */
export async function startSlurmCluster(nodeCount = 3, options: SlurmTestClusterOptions = {}): Promise<SlurmTestCluster> {
  const directory = await mkdtemp(join(tmpdir(), 'servelab-slurm-'));
  // munged (running as the munge user) must reach its socket's directory; it refuses a directory others may write.
  await chmod(directory, 0o755);
  const mungeDirectory = join(directory, 'munge');
  await mkdir(mungeDirectory, { mode: 0o755 });
  const mungeIds = await run('id', ['-u', 'munge']).then(async ({ stdout }) => ({ uid: Number(stdout.trim()), gid: Number((await run('id', ['-g', 'munge'])).stdout.trim()) }));
  await chown(mungeDirectory, mungeIds.uid, mungeIds.gid);
  await mkdir(join(directory, 'state'));
  await mkdir(join(directory, 'spool'));
  const mungeSocket = join(mungeDirectory, 'munge.sock');
  const nodes = Array.from({ length: nodeCount }, (_, index) => `n${index + 1}`);
  // One run below the ephemeral range: slurmctld's port, then each slurmd's.
  const controllerPort = await freePortRun(1 + nodes.length);
  const nodePorts = nodes.map((_node, index) => controllerPort + 1 + index);
  const confPath = join(directory, 'slurm.conf');
  // A TaskProlog's `export NAME=value` lines go into the task's environment.
  const prologLines = [
    ...(options.stepGpus === undefined ? [] : [`echo "export CUDA_VISIBLE_DEVICES=${options.stepGpus}"`]),
    ...(await shiftedClockPrologLines(options.shiftedClocks ?? {})),
  ];
  let taskProlog: string | undefined;
  if (prologLines.length > 0) {
    taskProlog = join(directory, 'task-prolog.sh');
    await writeFile(taskProlog, `#!/bin/sh\n${prologLines.join('\n')}\n`, { mode: 0o755 });
  }
  const network = options.distinctAddresses === true ? await makeNodeNetwork(nodes) : undefined;
  await writeFile(confPath, slurmConf({ directory, mungeSocket, controllerPort, nodes, nodePorts, taskProlog, network }));
  const env: NodeJS.ProcessEnv = { ...process.env, SLURM_CONF: confPath };

  const daemons: SupervisedProcess[] = [];
  const daemon = (name: string, command: string, args: string[]): SupervisedProcess => {
    const child = new SupervisedProcess({ name, command, args, env, logPath: join(directory, `${name}.out`), stopGraceMs: 3_000 });
    daemons.push(child);
    return child;
  };
  const command = async (program: string, args: string[]): Promise<string> => (await run(program, args, { env, timeout: 30_000 })).stdout;

  let stopping: Promise<void> | undefined;
  const cluster: SlurmTestCluster = {
    directory,
    confPath,
    nodes,
    env,
    command,
    async allocate(count, timeLimitMinutes = 10, options = {}) {
      const limit = timeLimitMinutes === null ? [] : [`--time=${timeLimitMinutes}`];
      const exclusive = options.exclusive === true ? ['--exclusive'] : [];
      const { stderr } = await run('salloc', ['--no-shell', `--nodes=${count}`, ...exclusive, ...limit, '--job-name=servelab-test', '--immediate=20'], { env, timeout: 30_000 });
      const jobId = /Granted job allocation (\d+)/.exec(stderr)?.[1];
      if (jobId === undefined) throw new Error(`salloc granted no allocation: ${stderr}`);
      const nodeList = (await command('squeue', ['--noheader', '--jobs', jobId, '--format=%N'])).trim();
      return { jobId, nodeList, env: { ...env, SLURM_JOB_ID: jobId, SLURM_JOB_NODELIST: nodeList } };
    },
    async runningSteps() {
      const out = await command('squeue', ['--noheader', '--steps', '--format=%i']);
      return out.split('\n').map((line) => line.trim()).filter((line) => line !== '');
    },
    stop() {
      stopping ??= (async () => {
        await endJobs(command).catch(() => undefined);
        await killStrayStepDaemons(confPath);
        // Nodes first, then the controller, then munged: each by the process id it was started with.
        for (const child of daemons.slice().reverse()) await child.stop();
        await network?.remove();
        await rm(directory, { recursive: true, force: true });
      })();
      return stopping;
    },
  };

  try {
    // munged must run as the munge user: as root it refuses to start. runuser leads the group the stop signals.
    daemon('munged', 'runuser', ['-u', 'munge', '--', 'munged', '--foreground', `--socket=${mungeSocket}`, '--key-file=/etc/munge/munge.key', `--pid-file=${join(mungeDirectory, 'munged.pid')}`, `--seed-file=${join(mungeDirectory, 'munged.seed')}`, `--log-file=${join(mungeDirectory, 'munged.log')}`]);
    await waitFor(async () => (await readdir(mungeDirectory)).includes('munge.sock'), 'munged to open its socket');
    // -i: ignore any saved state (there is none: a fresh directory).
    daemon('slurmctld', 'slurmctld', ['-D', '-i']);
    for (const [index, node] of nodes.entries()) {
      const shift = options.shiftedClocks?.[node];
      const slurmd = [...(shift === undefined ? [] : ['faketime', '-f', shift]), 'slurmd', '-D', '-N', node];
      const namespace = network?.namespaces[index];
      const [program, ...args] = namespace === undefined ? slurmd : ['nsenter', `--net=/run/netns/${namespace}`, ...slurmd];
      daemon(`slurmd-${node}`, program as string, args);
    }
    await waitFor(async () => (await command('sinfo', ['--noheader', '--format=%t %D'])).trim() === `idle ${nodeCount}`, `${nodeCount} idle nodes`);
    return cluster;
  } catch (error) {
    const logs = await Promise.all(daemons.map(async (child) => `${child.name}: ${child.tail.text().trim()}`));
    await cluster.stop();
    throw new Error(`the test Slurm cluster did not start: ${(error as Error).message}\n${logs.join('\n')}`);
  }
}

/**
 * The TaskProlog lines that put a shifted node's faketime into its tasks. slurmd under faketime is not enough: a task's
 * environment is the one srun sent with the step, not its slurmstepd's, so without these lines `srun --nodelist n2 date`
 * on a node whose slurmd ran under `faketime -f +5s` printed the true time (tried on this test cluster). The prolog runs on every node; it exports the preload only where SLURMD_NODENAME is shifted. The
 * library's path is the one faketime itself sets (`/usr/$LIB/...` on Debian, `$LIB` expanded by the dynamic loader).
 */
async function shiftedClockPrologLines(shifts: Readonly<Record<string, string>>): Promise<string[]> {
  const entries = Object.entries(shifts);
  if (entries.length === 0) return [];
  const preload = (await run('faketime', ['-f', '+0s', 'sh', '-c', 'printf %s "$LD_PRELOAD"'])).stdout;
  const quote = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`;
  return [
    'case "$SLURMD_NODENAME" in',
    ...entries.map(([node, shift]) =>
      `  ${node}) echo ${quote(`export LD_PRELOAD=${preload}`)}; echo ${quote(`export FAKETIME=${shift}`)}; echo 'export FAKETIME_DONT_FAKE_MONOTONIC=1' ;;`),
    'esac',
  ];
}

function slurmConf(settings: { directory: string; mungeSocket: string; controllerPort: number; nodes: string[]; nodePorts: number[]; taskProlog: string | undefined; network: NodeNetwork | undefined }): string {
  const { directory, mungeSocket, controllerPort, nodes, nodePorts, taskProlog, network } = settings;
  const host = hostname();
  const lines = [
    'ClusterName=servelabtest',
    `SlurmctldHost=${host}(${network?.hostAddress ?? '127.0.0.1'})`,
    `SlurmctldPort=${controllerPort}`,
    'AuthType=auth/munge',
    'CredType=cred/munge',
    // Our own munged: the machine's (if any) is never used, and another cluster's never reached.
    `AuthInfo=socket=${mungeSocket}`,
    'SlurmUser=root',
    'SlurmdUser=root',
    `StateSaveLocation=${join(directory, 'state')}`,
    `SlurmdSpoolDir=${join(directory, 'spool', '%n')}`,
    `SlurmctldPidFile=${join(directory, 'slurmctld.pid')}`,
    `SlurmdPidFile=${join(directory, 'slurmd-%n.pid')}`,
    `SlurmctldLogFile=${join(directory, 'slurmctld.log')}`,
    `SlurmdLogFile=${join(directory, 'slurmd-%n.log')}`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'MpiDefault=none',
    'SchedulerType=sched/backfill',
    'SchedulerParameters=bf_interval=1',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_CPU',
    'SlurmdParameters=config_overrides',
    'ReturnToService=2',
    'MailProg=/bin/true',
    // A cancelled step's processes get SIGKILL 2 s after SIGTERM (default 30 s).
    'KillWait=2',
    ...(taskProlog === undefined ? [] : [`TaskProlog=${taskProlog}`]),
    ...nodes.map((node, index) => `NodeName=${node} NodeHostname=${host} NodeAddr=${network?.nodeAddresses[index] ?? '127.0.0.1'} Port=${nodePorts[index]} CPUs=16 State=UNKNOWN`),
    'PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP',
  ];
  return `${lines.join('\n')}\n`;
}

interface NodeNetwork {
  /** This host's address on the bridge: where slurmctld and servelab are reached from the nodes. */
  hostAddress: string;
  /** Node i's address, in the order of the nodes. */
  nodeAddresses: string[];
  /** Node i's network namespace (under /run/netns). */
  namespaces: string[];
  /** Removes the namespaces, the bridge and the blackhole route (after every daemon has stopped). */
  remove(): Promise<void>;
}

let networksMade = 0;

/**
 * A bridge on this host with one network namespace per node, each joined by a veth pair. Everything exists before any
 * daemon starts (a slurmd must find its address at start). Names and subnet carry this process's id and a counter,
 * so clusters of other test files and other people's tests do not meet.
 */
async function makeNodeNetwork(nodes: readonly string[]): Promise<NodeNetwork> {
  const tag = `${process.pid % 100_000}${String.fromCharCode(97 + (networksMade % 26))}`;
  const subnet = `10.253.${(process.pid + networksMade * 7) % 250}`;
  networksMade++;
  const bridge = `slb${tag}`;
  const hostAddress = `${subnet}.1`;
  const namespaces = nodes.map((_, index) => `sl${tag}-${index + 1}`);
  const nodeAddresses = nodes.map((_, index) => `${subnet}.${10 + index + 1}`);
  const ip = async (...args: string[]): Promise<void> => void (await run('ip', args));
  const made: Array<() => Promise<void>> = [];
  const remove = async (): Promise<void> => {
    for (const undo of made.reverse()) await undo().catch(() => undefined);
    made.length = 0;
  };
  try {
    // Anything for the subnet that is not on the bridge (the bridge gone, a typo) is dropped here, never routed on.
    await ip('route', 'add', 'blackhole', `${subnet}.0/24`, 'metric', '4000');
    made.push(() => ip('route', 'del', 'blackhole', `${subnet}.0/24`, 'metric', '4000'));
    await ip('link', 'add', bridge, 'type', 'bridge');
    made.push(() => ip('link', 'del', bridge));
    await ip('addr', 'add', `${hostAddress}/24`, 'dev', bridge);
    await ip('link', 'set', bridge, 'up');
    for (const [index, namespace] of namespaces.entries()) {
      await ip('netns', 'add', namespace);
      made.push(() => ip('netns', 'del', namespace));
      const outside = `slv${tag}${index + 1}`;
      const inside = `sli${tag}${index + 1}`;
      await ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
      await ip('link', 'set', inside, 'netns', namespace);
      await ip('link', 'set', outside, 'master', bridge, 'up');
      await ip('-n', namespace, 'link', 'set', 'lo', 'up');
      // Only the subnet's own route inside: no default route, so nothing in a namespace reaches past this host.
      await ip('-n', namespace, 'addr', 'add', `${nodeAddresses[index]}/24`, 'dev', inside);
      await ip('-n', namespace, 'link', 'set', inside, 'up');
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { hostAddress, nodeAddresses, namespaces, remove };
}

async function waitFor(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await sleep(100);
  }
}

async function endJobs(command: (program: string, args: string[]) => Promise<string>): Promise<void> {
  const jobs = (await command('squeue', ['--noheader', '--format=%i'])).split('\n').filter((line) => line.trim() !== '');
  if (jobs.length === 0) return;
  await command('scancel', jobs.map((job) => job.trim()));
  const deadline = Date.now() + JOBS_END_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if ((await command('squeue', ['--noheader', '--states=all', '--format=%i %T'])).split('\n').every((line) => line.trim() === '' || !/RUNNING|COMPLETING|PENDING|CONFIGURING/.test(line))) return;
    await sleep(100);
  }
}

/**
 * slurmd starts each step's slurmstepd as a daemon, outside slurmd's process group: stopping slurmd leaves them. Ours
 * are the ones whose SLURM_CONF is this cluster's; any left after the jobs ended are killed by process id.
 */
async function killStrayStepDaemons(confPath: string): Promise<void> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const executable = await readlink(join('/proc', entry, 'exe'));
      if (!executable.endsWith('/slurmstepd')) continue;
      const environment = (await readFile(join('/proc', entry, 'environ'), 'utf8')).split('\0');
      if (environment.includes(`SLURM_CONF=${confPath}`)) process.kill(Number(entry), 'SIGKILL');
    } catch {
      // Gone already, or not ours to read.
    }
  }
}
