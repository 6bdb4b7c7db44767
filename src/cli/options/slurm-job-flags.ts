import { DEFAULT_CLIENT_NODES, DEFAULT_GPUS_PER_NODE, DEFAULT_SLURM_TIME } from '../../config/slurm-job-settings.js';
import { parseInteger, type FlagSpec } from './option-table.js';

const SLURM = 'Slurm (docs/slurm.md):';

/** Where processes run, and how a run is submitted from a login node. Also settings in `servelab run` files. */
export const slurmJobFlags: FlagSpec[] = [
  { flag: 'launcher', key: 'launcher', kind: 'value', valueName: 'where', choices: ['local', 'slurm'], defaultText: 'local', group: SLURM, description: 'local: processes on this host; slurm: job steps inside an allocation (SLURM_JOB_ID set), or, from a login node, the run submitted as one batch job (sbatch), followed to its end, its run directory on a filesystem this host shares' },
  { flag: 'gpus-per-node', key: 'gpusPerNode', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: String(DEFAULT_GPUS_PER_NODE), group: SLURM, description: 'servers per Slurm node' },
  { flag: 'client-nodes', key: 'clientNodes', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: String(DEFAULT_CLIENT_NODES), group: SLURM, description: 'Slurm nodes for load generators' },
  { flag: 'slurm-partition', key: 'slurmPartition', kind: 'value', valueName: 'name', group: SLURM, description: 'submitted job: sbatch --partition' },
  { flag: 'slurm-account', key: 'slurmAccount', kind: 'value', valueName: 'name', group: SLURM, description: 'submitted job: sbatch --account' },
  { flag: 'slurm-time', key: 'slurmTime', kind: 'value', valueName: 'limit', defaultText: DEFAULT_SLURM_TIME, group: SLURM, description: 'submitted job: its time limit, in Slurm\'s formats (minutes, h:m:s, days-h:m:s), never unlimited; two minutes before it (half the limit if shorter) the run is told to stop and write what it measured' },
  { flag: 'slurm-nodes', key: 'slurmNodes', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: 'servers / gpus-per-node + client nodes', group: SLURM, description: 'submitted job: sbatch --nodes' },
  { flag: 'slurm-arg', key: 'slurmArgs', kind: 'value', valueName: 'arg', repeatable: true, group: SLURM, description: 'submitted job: one sbatch argument, verbatim, as an #SBATCH line (repeat for several), e.g. --slurm-arg=--gres=gpu:8 --slurm-arg=--exclusive' },
];
