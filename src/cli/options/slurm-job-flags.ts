import { DEFAULT_SLURM_TIME } from '../../config/slurm-job-settings.js';
import { targetFlags } from './node-test-flags.js';
import { parseInteger, type FlagSpec } from './option-table.js';

const SLURM = 'Slurm (docs/slurm.md):';

/**
 * How a `--launcher slurm` run is submitted from a login node (sbatch). Also settings in `servelab run` files and the
 * library. `--launcher` and `--gpus-per-node` themselves are target flags (node-test-flags.ts).
 */
export const slurmJobFlags: FlagSpec[] = [
  { flag: 'slurm-partition', key: 'slurmPartition', kind: 'value', valueName: 'name', group: SLURM, description: 'submitted job: sbatch --partition' },
  { flag: 'slurm-account', key: 'slurmAccount', kind: 'value', valueName: 'name', group: SLURM, description: 'submitted job: sbatch --account' },
  { flag: 'slurm-time', key: 'slurmTime', kind: 'value', valueName: 'limit', defaultText: DEFAULT_SLURM_TIME, group: SLURM, description: 'submitted job: its time limit, in Slurm\'s formats (minutes, h:m:s, days-h:m:s), never unlimited; two minutes before it (half the limit if shorter) the run is told to stop and write what it measured' },
  { flag: 'slurm-nodes', key: 'slurmNodes', kind: 'value', valueName: 'n', parse: parseInteger, defaultText: 'servers / --gpus-per-node (else one a node), plus one a load generator with --client-nodes above 1', group: SLURM, description: 'submitted job: sbatch --nodes' },
  { flag: 'slurm-arg', key: 'slurmArgs', kind: 'value', valueName: 'arg', repeatable: true, group: SLURM, description: 'submitted job: one sbatch argument, verbatim, as an #SBATCH line (repeat for several), e.g. --slurm-arg=--gres=gpu:8 --slurm-arg=--exclusive' },
];

/** `servelab sweep`: where its points run (--launcher, --gpus-per-node) and how they are submitted. */
export const sweepSlurmFlags: FlagSpec[] = [...targetFlags.filter((spec) => spec.key === 'launcher' || spec.key === 'gpusPerNode'), ...slurmJobFlags];
