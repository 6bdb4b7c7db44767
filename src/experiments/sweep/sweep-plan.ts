import { z } from 'zod';
import { ServelabError } from '../../errors/servelab-error.js';
import { readSloTargets, sloTargetsSchema } from '../../config/slo-targets.js';
import { toCamelCase } from '../../config/snake-case-settings.js';
import { parseConfig } from '../../config/validate.js';

/**
 * A sweep file (YAML or JSON):
 *
 *   test: routing                       # or node
 *   maxParallel: 4                      # points submitted as Slurm jobs at once (settings: { launcher: slurm })
 *   settings: { numGpus: 4, numPrompts: 300 }   # shared by every run, same names as a test file
 *   grid:                               # every combination is one run
 *     routingPolicy: [cache_aware, round_robin]
 *     requestRate: [10, 20, 40]
 *   search:                             # optional: per combination of the other grid settings, the highest rate
 *     slo: { ttftMs: 500, tpotMs: 50 }  # that meets the objectives
 *     attainment: 0.9
 *     lowRate: 1
 *     highRate: 100
 *     steps: 5
 *     maxNumPrompts: 8000               # optional: probes too short to judge are doubled up to this
 */
export const sweepPlanSchema = z
  .object({
    test: z.enum(['node', 'routing']).default('node'),
    settings: z.record(z.string(), z.unknown()).default({}),
    grid: z.record(z.string(), z.array(z.unknown()).min(1, { message: 'each grid setting needs at least one value' })).default({}),
    /** With `launcher: slurm` from a login node, each point is its own batch job: at most this many at once. */
    maxParallel: z.number().int().positive().default(4),
    // camelCase or the first users' snake_case (`low_rate`, `slo.ttft_ms`); strict, so a misspelt key is refused.
    search: z.preprocess(
      camelCaseSearch,
      z
        .object({
          slo: z.preprocess((slo) => readSloTargets(slo, 'search.slo'), sloTargetsSchema),
          /** A run meets the objectives when at least this fraction of all its requests succeeded and met every one. */
          attainment: z.number().gt(0).max(1).default(0.9),
          lowRate: z.number().positive().default(1),
          highRate: z.number().positive().default(100),
          /** Bisection steps between the highest passing and the lowest failing rate (geometric midpoints). */
          steps: z.number().int().min(1).max(20).default(5),
          /**
           * The longest run a probe may be lengthened to: a probe too short for the verdict to judge is run again with
           * twice the prompts, up to this (default 8 x the probe's first run).
           */
          maxNumPrompts: z.number().int().positive().optional(),
        })
        .strict(),
    ).optional(),
  })
  .strict();

function camelCaseSearch(search: unknown): unknown {
  if (typeof search !== 'object' || search === null || Array.isArray(search)) return search;
  return Object.fromEntries(Object.entries(search).map(([key, value]) => [toCamelCase(key), value]));
}

export type SweepPlan = z.output<typeof sweepPlanSchema>;

export interface GridPoint {
  /** A readable name that is safe in paths, shells and CSV cells: `routingPolicy=cache_aware__requestRate=10`. */
  label: string;
  values: Record<string, unknown>;
}

export function parseSweepPlan(input: unknown): SweepPlan {
  const plan = parseConfig(sweepPlanSchema, input);
  if (plan.search !== undefined) {
    const { slo, lowRate, highRate } = plan.search;
    if (slo.ttftMs === undefined && slo.tpotMs === undefined && slo.totalMs === undefined) {
      throw new ServelabError('INVALID_CONFIG', 'invalid sweep: search.slo needs at least one of ttftMs, tpotMs, totalMs');
    }
    if (lowRate >= highRate) throw new ServelabError('INVALID_CONFIG', `invalid sweep: search.lowRate (${lowRate}) must be below search.highRate (${highRate})`);
  }
  return plan;
}

/** Every combination of the grid's values, in file order (the last setting varies fastest). */
export function gridPoints(grid: Record<string, unknown[]>): GridPoint[] {
  let points: Record<string, unknown>[] = [{}];
  for (const [key, values] of Object.entries(grid)) {
    points = points.flatMap((point) => values.map((value) => ({ ...point, [key]: value })));
  }
  return points.map((values) => ({ values, label: labelOf(values) }));
}

export function labelOf(values: Record<string, unknown>): string {
  const parts = Object.entries(values).map(([key, value]) => `${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  return parts.length === 0 ? 'base' : parts.join('__').replace(/[^A-Za-z0-9=._-]/g, '_');
}
