import { join, resolve } from 'node:path';
import { ServelabError } from '../../errors/servelab-error.js';
import { formatComparisonTable, settingLabels, writeComparison, type ComparedRun } from '../../report/compare/compare-runs.js';
import { csvField, csvLine } from '../../report/csv/csv-format.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { NodeTest } from '../node-test.js';
import { RoutingTest } from '../routing-test.js';
import type { TestResult } from '../test-result.js';
import type { RepeatsResult } from '../repeats/run-repeats.js';
import { judgeProbe, PASSING_CRITERION, type ProbeJudgement } from './probe-judgement.js';
import { gridPoints, labelOf, type GridPoint, type SweepPlan } from './sweep-plan.js';
import { submitsAsJob } from '../../cluster/slurm-jobs/slurm-allocation.js';

export interface SweepRunOutcome {
  label: string;
  values: Record<string, unknown>;
  result?: TestResult;
  /** Why the run could not be made (a server that never got ready, ...); the sweep goes on. */
  failure?: string;
  /** For search probes: whether the run met the objectives (its goodput fraction reached the attainment). */
  meetsSlo?: boolean;
  /** For search probes: what the run says about its rate (probe-judgement.ts): only `pass` counts as passing. */
  judgement?: ProbeJudgement;
  /** A grid point run with `repeats` above 1: every repeat and the estimates over them (`result` is its first repeat). */
  series?: RepeatsResult;
}

export interface SearchOutcome {
  label: string;
  values: Record<string, unknown>;
  /** The highest rate tried that passed (objectives met, STABLE, long enough to judge); null when none did. */
  highestPassingRate: number | null;
  /** The lowest rate tried that failed (objectives missed, or SATURATED at the longest run); null when none did. */
  lowestFailingRate: number | null;
  /** Rates whose runs could not be judged even at the longest run allowed (or that failed to run); never passing. */
  notJudgedRates: number[];
}

export interface SweepResult {
  outputDirectory: string;
  runs: SweepRunOutcome[];
  searches: SearchOutcome[];
  files: string[];
  /** The comparison table of every run made, labelled by the settings that differ (what `servelab compare` prints). */
  comparisonTable: string;
}

export interface SweepOptions {
  outputDirectory: string;
  signal?: AbortSignal;
  /** Told before each run starts. */
  onRunStart?: (label: string, index: number) => void;
}

/**
 * Runs a grid of tests (each its own run directory under `runs/`), then, when asked, searches per grid point for the
 * highest request rate that meets the objectives, and writes `sweep.csv`, `search.csv` and a combined comparison.
 */
export async function runSweep(plan: SweepPlan, options: SweepOptions): Promise<SweepResult> {
  const outputDirectory = resolve(options.outputDirectory);
  const runs: SweepRunOutcome[] = [];
  const searches: SearchOutcome[] = [];
  // A point whose settings ask for Slurm from outside an allocation runs as its own batch job (MeasuredTest.run).
  const runPoint = async (settings: Record<string, unknown>): Promise<TestResult> => {
    const test = plan.test === 'routing' ? new RoutingTest(settings) : new NodeTest(settings);
    return test.run({ signal: options.signal });
  };
  let started = 0;
  const makeRun = async (label: string, values: Record<string, unknown>): Promise<SweepRunOutcome> => {
    if (options.signal?.aborted === true) throw new ServelabError('INTERRUPTED', 'the sweep was interrupted; finished runs are kept');
    options.onRunStart?.(label, started++);
    const settings = { ...plan.settings, ...values, outputDir: join(outputDirectory, 'runs', label), runId: label, quiet: true };
    try {
      const test = plan.test === 'routing' ? new RoutingTest(settings) : new NodeTest(settings);
      if (test.config.repeats > 1) {
        // Each grid point repeated: runs/<label>/repeat-k/ and the combined estimates in runs/<label>/.
        const series = await test.runRepeats({ signal: options.signal });
        return { label, values, result: series.repeats[0] as TestResult, series };
      }
      return { label, values, result: await runPoint(settings) };
    } catch (error) {
      // A configuration error is the same for every run: stop at once rather than repeating it.
      if (error instanceof ServelabError && (error.code === 'INVALID_CONFIG' || error.code === 'INTERRUPTED')) throw error;
      return { label, values, failure: error instanceof Error ? error.message : String(error) };
    }
  };
  const runOne = async (label: string, values: Record<string, unknown>): Promise<SweepRunOutcome> => {
    const outcome = await makeRun(label, values);
    runs.push(outcome);
    return outcome;
  };

  // With only a search and no grid, there is no grid run to make (the base point would be a run with no rate given).
  const onlySearch = plan.search !== undefined && Object.keys(plan.grid).length === 0;
  // Every grid point's configuration is checked before the first run: a bad value must not end a sweep hours in.
  const settingsOf = (values: Record<string, unknown>): Record<string, unknown> => ({ ...plan.settings, ...values, outputDir: outputDirectory, quiet: true });
  const construct = (settings: Record<string, unknown>): unknown => (plan.test === 'routing' ? new RoutingTest(settings) : new NodeTest(settings));
  if (!onlySearch) for (const point of gridPoints(plan.grid)) construct(settingsOf(point.values));
  if (plan.search !== undefined && [plan.settings['repeats'], ...(plan.grid['repeats'] ?? [])].some((repeats) => typeof repeats === 'number' && repeats > 1)) {
    // A probe's pass or fail is one run's verdict and attainment; what N repeats of it should pass is not defined yet.
    throw new ServelabError('INVALID_CONFIG', 'invalid sweep: repeats apply to grid runs, and a search probes each rate with one run; drop repeats, or the search section');
  }
  if (plan.search !== undefined) {
    const { requestRate: _rate, ...otherGrid } = plan.grid;
    for (const point of gridPoints(otherGrid)) construct(settingsOf({ ...point.values, requestRate: plan.search.lowRate, slo: plan.search.slo }));
  }
  if (!onlySearch) {
    // Points run one at a time on this host (two at once would measure each other); as jobs, up to maxParallel at
    // once, each on its own nodes. Rows stay in grid order whatever order the jobs end in.
    const points = gridPoints(plan.grid);
    const parallel = points.some((point) => submitsAsJob(settingsOf(point.values))) ? plan.maxParallel : 1;
    runs.push(...(await inPool(points, parallel, (point) => makeRun(point.label, point.values))));
  }

  if (plan.search !== undefined) {
    const search = plan.search;
    const { requestRate: _ignored, ...otherGrid } = plan.grid;
    for (const point of gridPoints(otherGrid)) searches.push(await searchHighestRate(point, search, runOne));
  }

  const { files, comparisonTable } = await writeSweepFiles(outputDirectory, runs, searches, plan);
  return { outputDirectory, runs, searches, files, comparisonTable };
}

/**
 * Runs `work` over `items`, at most `parallel` at once, and returns the results in the items' order. The first
 * exception (an interrupt, a configuration error) is thrown once every started item has ended.
 */
async function inPool<Item, Result>(items: readonly Item[], parallel: number, work: (item: Item) => Promise<Result>): Promise<Result[]> {
  const results: Result[] = new Array<Result>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index] as Item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, items.length)) }, worker));
  if (failure !== undefined) throw failure.error;
  return results;
}

/**
 * Bisection on a geometric scale between the highest rate that passed and the lowest that did not. A rate passes only
 * when its run met the objectives and the verdict judged it STABLE over a long enough window; a probe too short to
 * judge is run again with twice the prompts, up to search.maxNumPrompts (probe-judgement.ts).
 */
async function searchHighestRate(
  point: GridPoint,
  search: NonNullable<SweepPlan['search']>,
  runOne: (label: string, values: Record<string, unknown>) => Promise<SweepRunOutcome>,
): Promise<SearchOutcome> {
  const notJudgedRates: number[] = [];
  let longestNumPrompts = search.maxNumPrompts;
  // Rates are probed at four significant figures, and the answer is the rate a run was made at.
  const probe = async (requestRate: number): Promise<boolean> => {
    let lengthened: number | undefined;
    for (;;) {
      const values = { ...point.values, requestRate, ...(lengthened === undefined ? {} : { numPrompts: lengthened }) };
      const outcome = await runOne(`search__${labelOf(values)}`, { ...values, slo: search.slo });
      const madeNumPrompts = outcome.result?.run.config['numPrompts'];
      const made = typeof madeNumPrompts === 'number' ? madeNumPrompts : undefined;
      if (made !== undefined) longestNumPrompts ??= 8 * made;
      const atLongest = made === undefined || longestNumPrompts === undefined || 2 * made > longestNumPrompts;
      const goodput = outcome.result?.metrics.goodput;
      outcome.meetsSlo = goodput !== null && goodput !== undefined && goodput.fraction >= search.attainment;
      outcome.judgement = judgeProbe(outcome.result?.metrics, search.attainment, atLongest);
      if (outcome.judgement.state === 'lengthen' && made !== undefined) {
        lengthened = 2 * made;
        continue;
      }
      if (outcome.judgement.state === 'not_judged') notJudgedRates.push(requestRate);
      return outcome.judgement.state === 'pass';
    }
  };
  let passing: number | null = null;
  let failing: number | null = null;
  // The bisection's upper bound: the lowest rate that did not pass (failed or not judged).
  let notPassing: number | null = null;
  const tried = async (exactRate: number): Promise<boolean> => {
    const rate = Number(exactRate.toPrecision(4));
    const passed = await probe(rate);
    if (passed) passing = rate;
    else {
      notPassing = rate;
      if (!notJudgedRates.includes(rate)) failing = rate;
    }
    return passed;
  };
  if (!(await tried(search.highRate))) await tried(search.lowRate);
  for (let step = 0; step < search.steps && passing !== null && notPassing !== null; step++) await tried(Math.sqrt(passing * notPassing));
  return { label: point.label, values: point.values, highestPassingRate: passing, lowestFailingRate: failing, notJudgedRates };
}

async function writeSweepFiles(outputDirectory: string, runs: SweepRunOutcome[], searches: SearchOutcome[], plan: SweepPlan): Promise<{ files: string[]; comparisonTable: string }> {
  const files: string[] = [];
  const gridKeys = [...new Set(runs.flatMap((run) => Object.keys(run.values)))].filter((key) => key !== 'slo');
  const header = ['label', ...gridKeys, 'status', 'verdict', 'meets_slo', 'search_judgement', 'search_why', 'num_prompts', 'succeeded', 'failed', 'request_throughput', 'output_token_throughput', 'ttft_p50_ms', 'ttft_p99_ms', 'tpot_p50_ms', 'tpot_p99_ms', 'e2e_p50_ms', 'e2e_p99_ms', 'goodput_fraction', 'run_directory', 'failure', 'repeats', 'request_throughput_low', 'request_throughput_high', 'ttft_p99_ms_low', 'ttft_p99_ms_high', 'e2e_p99_ms_low', 'e2e_p99_ms_high'];
  const milliseconds = (value: number | undefined): number | undefined => (value === undefined ? undefined : value * 1000);
  const row = (fields: (string | number | boolean | undefined | null)[]): string => csvLine(fields.map(csvField));
  const lines = [row(header)];
  for (const run of runs) {
    const metrics = run.result?.metrics;
    // A repeated grid point: its estimates over the repeats and their 95% intervals, its counts summed.
    const combined = run.series?.combined.metrics;
    const estimate = (metric: string, statistic: string): { estimate: number; low: number | null; high: number | null } | undefined =>
      combined?.find((entry) => entry.metric === metric && entry.statistic === statistic);
    const pick = (metric: string, statistic: string, single: number | undefined): number | undefined => (combined === undefined ? single : estimate(metric, statistic)?.estimate);
    const repeats = run.series?.repeats ?? [];
    const sum = (count: (result: TestResult) => number): number | undefined => (run.series === undefined ? undefined : repeats.reduce((total, result) => total + count(result), 0));
    lines.push(
      row([
        run.label,
        ...gridKeys.map((key) => stringify(run.values[key])),
        run.series === undefined ? (run.result?.status ?? 'failed') : repeats.map((result) => result.status).join(' '),
        run.series === undefined ? metrics?.verdict.state : repeats.map((result) => result.metrics.verdict.state).join(' '),
        run.meetsSlo === undefined ? undefined : String(run.meetsSlo),
        run.judgement?.state,
        run.judgement?.why,
        numberOrUndefined(run.result?.run.config['numPrompts']),
        sum((result) => result.metrics.counts.succeeded) ?? metrics?.counts.succeeded,
        sum((result) => result.metrics.counts.failed) ?? metrics?.counts.failed,
        pick('request_throughput', 'value', metrics?.throughput.requestsPerSecond),
        pick('output_token_throughput', 'value', metrics?.throughput.outputTokensPerSecond),
        pick('ttft', 'p50', milliseconds(metrics?.latencies.ttft?.p50)),
        pick('ttft', 'p99', milliseconds(metrics?.latencies.ttft?.p99)),
        pick('tpot', 'p50', milliseconds(metrics?.latencies.tpot?.p50)),
        pick('tpot', 'p99', milliseconds(metrics?.latencies.tpot?.p99)),
        pick('total_latency', 'p50', milliseconds(metrics?.latencies.total_latency?.p50)),
        pick('total_latency', 'p99', milliseconds(metrics?.latencies.total_latency?.p99)),
        run.series === undefined ? metrics?.goodput?.fraction : meanOf(repeats.map((result) => result.metrics.goodput?.fraction)),
        run.series?.outputDirectory ?? run.result?.outputDirectory,
        run.failure,
        run.series === undefined ? 1 : repeats.length,
        estimate('request_throughput', 'value')?.low,
        estimate('request_throughput', 'value')?.high,
        estimate('ttft', 'p99')?.low,
        estimate('ttft', 'p99')?.high,
        estimate('total_latency', 'p99')?.low,
        estimate('total_latency', 'p99')?.high,
      ]),
    );
  }
  const sweepCsv = join(outputDirectory, 'sweep.csv');
  await writeFileAtomic(sweepCsv, lines.join(''));
  files.push(sweepCsv);
  if (searches.length > 0 && plan.search !== undefined) {
    const searchKeys = [...new Set(searches.flatMap((search) => Object.keys(search.values)))];
    const searchLines = [row(['label', ...searchKeys, 'highest_passing_rate', 'lowest_failing_rate', 'not_judged_rates', 'attainment', 'slo', 'criterion'])];
    for (const search of searches) {
      searchLines.push(row([search.label, ...searchKeys.map((key) => stringify(search.values[key])), search.highestPassingRate ?? undefined, search.lowestFailingRate ?? undefined, search.notJudgedRates.join(' '), plan.search.attainment, JSON.stringify(plan.search.slo), PASSING_CRITERION]));
    }
    const searchCsv = join(outputDirectory, 'search.csv');
    await writeFileAtomic(searchCsv, searchLines.join(''));
    files.push(searchCsv);
  }
  const made = runs.filter((run): run is SweepRunOutcome & { result: TestResult } => run.result !== undefined);
  const labels = settingLabels(made.map((run) => run.result.run.config));
  const compared: ComparedRun[] = made.map((run, index) => ({
    label: labels?.[index] ?? run.label,
    run: run.result.run,
    summary: run.result.metrics,
    ...(run.series === undefined
      ? {}
      : {
          repeats: run.series.repeats.map((result) => ({ run: result.run, summary: result.metrics })),
          combined: { confidence: run.series.combined.confidence, resamples: run.series.combined.bootstrap.resamples, bootstrapSeed: run.series.combined.bootstrap.seed, metrics: run.series.combined.metrics },
        }),
  }));
  // Grid points are not treatments of the first one: no Δ columns (compare any two of them with servelab compare).
  if (compared.length >= 1) files.push(...(await writeComparison(compared, outputDirectory, { deltas: false })));
  return { files, comparisonTable: compared.length >= 1 ? formatComparisonTable(compared) : '' };
}

const numberOrUndefined = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** The mean of the values given; undefined when none is. */
function meanOf(values: readonly (number | undefined)[]): number | undefined {
  const given = values.filter((value): value is number => value !== undefined);
  return given.length === 0 ? undefined : given.reduce((sum, value) => sum + value, 0) / given.length;
}

function stringify(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
