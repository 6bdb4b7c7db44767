import { join } from 'node:path';
import { jobContext } from '../cluster/slurm-jobs/job-context.js';
import { jobRequestFor } from '../cluster/slurm-jobs/job-request.js';
import { buildJobScript } from '../cluster/slurm-jobs/job-script.js';
import { ServelabError } from '../errors/servelab-error.js';
import { gridPoints, labelOf, type SweepPlan } from '../experiments/sweep/sweep-plan.js';
import { submitsAsJob } from '../cluster/slurm-jobs/slurm-allocation.js';
import { EXIT_OK } from './exit-codes.js';

/**
 * `servelab sweep --dry-run`: the batch script of every grid point, as the sweep would submit them. A search's probes
 * are decided as the bisection goes (each rate from the runs before it), so only its first, at highRate, is shown.
 */
export function printSweepJobScripts(plan: SweepPlan, outputDirectory: string): number {
  const { requestRate: _rate, ...otherGrid } = plan.grid;
  const points = plan.search !== undefined && Object.keys(plan.grid).length === 0 ? [] : gridPoints(plan.grid);
  const probes = plan.search === undefined ? [] : gridPoints(otherGrid).map((point) => {
    const values = { ...point.values, requestRate: plan.search?.highRate, slo: plan.search?.slo };
    return { label: `search__${labelOf({ ...point.values, requestRate: plan.search?.highRate })}`, values };
  });
  const all = [...points, ...probes];
  const settingsOf = (label: string, values: Record<string, unknown>): Record<string, unknown> => ({ ...plan.settings, ...values, outputDir: join(outputDirectory, 'runs', label), runId: label, quiet: true });
  if (!all.every((point) => submitsAsJob(settingsOf(point.label, point.values)))) {
    throw new ServelabError('INVALID_CONFIG', 'invalid configuration: --dry-run prints the batch scripts of a sweep whose points are submitted as jobs: give --launcher slurm (or launcher: slurm in its settings), outside an allocation');
  }
  const texts = all.map((point, index) => {
    const what = index < points.length ? `grid point ${index + 1}/${points.length}` : 'the first search probe (later probes follow from the runs)';
    return `# ===== ${what}: ${point.label} =====\n${buildJobScript(jobRequestFor(plan.test, settingsOf(point.label, point.values), jobContext()).spec)}`;
  });
  process.stdout.write(`# at most ${plan.maxParallel} of these jobs at once (--max-parallel)\n${texts.join('\n')}`);
  return EXIT_OK;
}
