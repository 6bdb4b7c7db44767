import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { resolveNodeTestConfig } from '../../config/node-test-config.js';
import { isPathValue, PATH_SETTINGS } from '../../config/path-settings.js';
import { resolveRoutingTestConfig } from '../../config/routing-test-config.js';
import { DEFAULT_SLURM_TIME, SUBMISSION_ONLY_SETTINGS } from '../../config/slurm-job-settings.js';
import { earlyWarningSeconds, slurmTimeSeconds } from '../../config/slurm-time.js';
import { camelCaseSettings } from '../../config/snake-case-settings.js';
import { impliedTarget } from '../../config/implied-target.js';
import type { TestLevel } from '../../types/run.js';
import { newRunId } from '../../orchestration/run-directory.js';
import type { JobScriptSpec } from './job-script.js';

/** One run to submit: the batch script's contents and where its files go on the submitting host. */
export interface JobRequest {
  spec: JobScriptSpec;
  runId: string;
  /** The run directory the job writes (on a filesystem the first node and this host share: docs/slurm.md). */
  runDirectory: string;
  /**
   * The job's own files before the run has a directory of its own (settings, output): a hidden sibling of the run
   * directory, since the run claims its directory only if it is new or empty. Moved into the run's logs/ at the end.
   */
  jobDirectory: string;
}

export interface JobRequestContext {
  /** The submitting directory: relative paths in the settings mean what they meant there. */
  workingDirectory: string;
  nodeExecutable: string;
  cliPath: string;
}

/**
 * Turns a test's settings (as given: camelCase or snake_case, no defaults filled in) into a job request. The settings
 * are validated here exactly as the run will validate them, so a bad one fails on the login node, not in the queue.
 * The job gets them minus the submission-only ones, with every path absolute and the run directory fixed.
 */
export function jobRequestFor(test: TestLevel, given: Record<string, unknown>, context: JobRequestContext): JobRequest {
  const settings = impliedTarget(camelCaseSettings(given));
  const resolved = test === 'routing' ? resolveRoutingTestConfig(settings) : resolveNodeTestConfig(settings);
  const runId = resolved.runId ?? newRunId(test);
  const runDirectory = resolve(context.workingDirectory, resolved.outputDir ?? join(resolved.resultsRoot, runId));
  const jobDirectory = join(dirname(runDirectory), `.${basename(runDirectory)}.slurm-job`);

  const inner: Record<string, unknown> = { test };
  for (const [key, value] of Object.entries(settings)) {
    if ((SUBMISSION_ONLY_SETTINGS as readonly string[]).includes(key)) continue;
    const isPath = ((PATH_SETTINGS as readonly string[]).includes(key) || key === 'serverRequestLogDir') && typeof value === 'string' && isPathValue(key, value);
    inner[key] = isPath && !isAbsolute(value) ? resolve(context.workingDirectory, value) : value;
  }
  inner['launcher'] = 'slurm';
  inner['outputDir'] = runDirectory;
  inner['runId'] = runId;
  // The job's output is a file the login node relays line by line: a redrawn bar would be one endless line there.
  if (inner['progress'] === undefined || inner['progress'] === 'auto' || inner['progress'] === 'bar') inner['progress'] = 'lines';

  const timeLimit = resolved.slurmTime ?? DEFAULT_SLURM_TIME;
  const spec: JobScriptSpec = {
    jobName: `servelab-${runId}`,
    partition: resolved.slurmPartition,
    account: resolved.slurmAccount,
    timeLimit,
    earlyWarningS: earlyWarningSeconds(slurmTimeSeconds(timeLimit) as number),
    nodes: resolved.slurmNodes ?? nodesForRun(test, resolved),
    extraArgs: resolved.slurmArgs ?? [],
    outputPath: join(jobDirectory, 'slurm-job.out'),
    errorPath: join(jobDirectory, 'slurm-job.err'),
    workingDirectory: context.workingDirectory,
    nodeExecutable: context.nodeExecutable,
    cliPath: context.cliPath,
    settingsPath: join(jobDirectory, 'settings.json'),
    settings: inner,
  };
  return { spec, runId, runDirectory, jobDirectory };
}

/**
 * The nodes a run needs: its servers at gpusPerNode a node (without it, one a node: the Slurm placement then spreads
 * the servers over every node of the allocation), plus a node for each load-generator process when the run spreads its
 * load over several (`clientNodes` above 1; one generator is the coordinator itself, on the first node). (A
 * virtual-time run or an attached target places nothing, and `launcher: slurm` refuses them: setting-rules.ts.)
 */
export function nodesForRun(test: TestLevel, config: { gpusPerNode?: number; numGpus?: number; clientNodes?: unknown }): number {
  const servers = test === 'routing' ? (config.numGpus ?? 1) : 1;
  const generators = typeof config.clientNodes === 'number' && config.clientNodes > 1 ? config.clientNodes : 0;
  return Math.ceil(servers / (config.gpusPerNode ?? 1)) + generators;
}
