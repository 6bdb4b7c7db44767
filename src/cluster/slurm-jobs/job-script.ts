import { ServelabError } from '../../errors/servelab-error.js';
import { directiveWord, shellWord } from './job-quoting.js';

/** Everything one batch script says; job-request.ts derives it from a test's settings. */
export interface JobScriptSpec {
  /** Shown by squeue; servelab-<run id>. */
  jobName: string;
  partition?: string;
  account?: string;
  /** sbatch --time, already checked to be a limit (never unlimited). */
  timeLimit: string;
  /** Seconds before the limit at which Slurm sends SIGTERM to the coordinator (`--signal=B:TERM@<s>`). */
  earlyWarningS: number;
  nodes: number;
  /** sbatch arguments as the user gave them, one `#SBATCH` line each. */
  extraArgs: readonly string[];
  /** The job's stdout and stderr (sbatch --output, --error), on a filesystem the submitting host reads too. */
  outputPath: string;
  errorPath: string;
  /** Where the job starts (sbatch --chdir): the submitting directory, so relative names mean what they meant there. */
  workingDirectory: string;
  /** The Node.js and servelab CLI the coordinator runs: the submitting host's, at the same paths on the nodes. */
  nodeExecutable: string;
  cliPath: string;
  /** The settings file the script writes and the coordinator reads (`servelab run FILE`). */
  settingsPath: string;
  /** `test: node | routing` and the run's settings, written verbatim into the script. */
  settings: Record<string, unknown>;
}

/** The quoted here-document's delimiter. JSON never has a line of its own equal to it (strings escape line breaks). */
const SETTINGS_END = 'SERVELAB_SETTINGS_END';

/**
 * The batch script for one run. Its `#SBATCH` lines come first (sbatch stops reading directives at the first command);
 * its body writes the run's settings with a quoted here-document (nothing in them is expanded) and `exec`s servelab,
 * so the coordinator is the batch step's own process: Slurm's early-warning SIGTERM and `scancel --batch` reach it
 * directly, and it stops as on Ctrl-C, writing what it measured.
 *
 * Why a settings file rather than the command's flags: one path serves the command line, `servelab run` files, the
 * library and sweep points alike, and settings with no flag (a failure schedule's list form, stages) travel unchanged.
 */
export function buildJobScript(spec: JobScriptSpec): string {
  if (spec.outputPath.includes('%') || spec.errorPath.includes('%')) {
    // Slurm reads %j, %x, ... in --output as patterns; a literal % would put the output somewhere the follower never reads.
    throw new ServelabError('INVALID_CONFIG', `invalid configuration: the job's output file ${spec.outputPath} holds a %, which Slurm reads as a file-name pattern; choose an --output-dir without %`);
  }
  const directives: string[] = [
    `--job-name=${directiveWord(spec.jobName, 'the job name')}`,
    `--nodes=${spec.nodes}`,
    `--time=${directiveWord(spec.timeLimit, '--slurm-time')}`,
    `--signal=B:TERM@${spec.earlyWarningS}`,
    `--output=${directiveWord(spec.outputPath, '--output-dir')}`,
    `--error=${directiveWord(spec.errorPath, '--output-dir')}`,
    `--chdir=${directiveWord(spec.workingDirectory, 'the working directory')}`,
  ];
  if (spec.partition !== undefined) directives.push(`--partition=${directiveWord(spec.partition, '--slurm-partition')}`);
  if (spec.account !== undefined) directives.push(`--account=${directiveWord(spec.account, '--slurm-account')}`);
  for (const arg of spec.extraArgs) directives.push(directiveWord(arg, '--slurm-arg'));
  // Infinity (a rate of inf) has no JSON form; the settings read the string back as the same rate.
  const settingsJson = JSON.stringify(spec.settings, (_key, value: unknown) => (value === Infinity ? 'Infinity' : value), 2);
  return [
    '#!/bin/bash',
    ...directives.map((directive) => `#SBATCH ${directive}`),
    '',
    '# Submitted by servelab from a login node (docs/slurm.md, "From a login node (sbatch)"). The coordinator runs',
    '# here, on the first node of the allocation; with --launcher slurm it places the servers, router and load',
    '# generators as job steps of this job. Slurm sends SIGTERM before the time limit: servelab then writes what it',
    '# measured and exits.',
    `# servelab creates ${spec.settingsPath.slice(0, spec.settingsPath.lastIndexOf('/'))} before it submits: Slurm opens --output and --error there first.`.replace(/[\r\n]/g, ' '),
    'set -eu',
    `cat > ${shellWord(spec.settingsPath)} <<'${SETTINGS_END}'`,
    settingsJson,
    SETTINGS_END,
    `exec ${shellWord(spec.nodeExecutable)} ${shellWord(spec.cliPath)} run ${shellWord(spec.settingsPath)}`,
    '',
  ].join('\n');
}
