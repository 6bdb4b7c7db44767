import { deriveColumns } from '../../analysis/derive.js';
import { computeStatistics } from '../../analysis/statistics.js';
import type { RequestRecord } from '../../types/record.js';
import type { RunData } from '../../types/run.js';
import type { Statistics } from '../../types/summary.js';
import { csvField, csvLine } from '../csv/csv-format.js';

/** The runs a PD comparison reads: their labels and data (compare-runs.ts's ComparedRun fits). */
export interface PdComparedRun {
  label: string;
  run: RunData;
}

/**
 * A stretch of a request's life that a PD run and a co-located run both have, or that only PD has. Each is read from
 * the PD phase columns in a PD run and from the lifecycle columns in a co-located one:
 * - queue before prefill: `prefill_queue_time` | server arrival to forward entry (`queue_time_end − server_created_time`);
 * - prefill compute: `prefill_forward_time` | `prefill_time` (forward entry to the server's first token);
 * - KV transfer, decode queue: PD only (a co-located server moves no KV and has no second queue: "none");
 * - TTFT and TPOT, as the client measured them: where prefills stop interrupting decode, TPOT is where it shows.
 */
export const PD_COMPARED_PHASES = ['queue before prefill', 'prefill compute', 'KV transfer', 'decode queue', 'TTFT', 'TPOT'] as const;
export type PdComparedPhase = (typeof PD_COMPARED_PHASES)[number];

function isPdRun(run: RunData): boolean {
  return run.config['pdDisaggregation'] === true || run.records.some((record) => record.prefillHost !== undefined);
}

/** Every compared phase of one request, its derived columns computed once. */
function phaseValues(record: RequestRecord, pd: boolean): Record<PdComparedPhase, number | undefined> {
  const derived = deriveColumns(record);
  const queueBeforePrefill = pd
    ? record.prefillQueueTime
    : record.queueTimeEnd !== undefined && record.serverCreatedTime !== undefined
      ? record.queueTimeEnd - record.serverCreatedTime
      : undefined;
  return {
    'queue before prefill': queueBeforePrefill,
    'prefill compute': pd ? record.prefillForwardTime : derived.prefill_time,
    'KV transfer': pd ? record.kvTransferTime : undefined,
    'decode queue': pd ? record.decodeQueueTime : undefined,
    TTFT: derived.ttft,
    TPOT: derived.tpot,
  };
}

/**
 * Each phase's statistics in a run, in one pass over its records: null when no request has it; 'none' when the run's
 * kind has no such phase (a co-located run's KV transfer and decode queue).
 */
function runPhaseStatistics(run: RunData): Map<PdComparedPhase, Statistics | null | 'none'> {
  const pd = isPdRun(run);
  const values = new Map<PdComparedPhase, number[]>(PD_COMPARED_PHASES.map((phase) => [phase, []]));
  for (const record of run.records) {
    if (record.warmup || !record.success) continue;
    const phases = phaseValues(record, pd);
    for (const phase of PD_COMPARED_PHASES) {
      const value = phases[phase];
      if (value !== undefined && Number.isFinite(value) && value >= 0) values.get(phase)?.push(value);
    }
  }
  return new Map(PD_COMPARED_PHASES.map((phase) => [phase, !pd && (phase === 'KV transfer' || phase === 'decode queue') ? 'none' : computeStatistics(values.get(phase) ?? [])]));
}

/** One phase at one statistic, in the baseline and in a compared run, in milliseconds. */
export interface PdPhaseMove {
  phase: PdComparedPhase;
  statistic: 'p50' | 'p99';
  baselineMs: number | null;
  comparedMs: number | null;
  /** compared − baseline (a phase absent co-located counts as 0 there: all of it is added). */
  changeMs: number | null;
  /** changeMs over the baseline; null when the baseline is 0, absent or none. */
  changeShare: number | null;
}

export interface PdComparison {
  baseline: string;
  compared: string;
  /** Each run's GPU count (servers); a comparison across different counts says so. */
  baselineGpus: number;
  comparedGpus: number;
  moves: PdPhaseMove[];
}

function gpusOf(run: RunData): number {
  const config = run.config;
  const servers = typeof config['numGpus'] === 'number' ? config['numGpus'] : 1;
  const tpSize = typeof config['tpSize'] === 'number' ? config['tpSize'] : 1;
  return servers * tpSize;
}

/**
 * The PD section of a comparison: present when at least one run is PD. Every other run is set against the first run
 * (typically a co-located run on the same GPUs, then one or more PD runs), phase by phase at p50 and p99. Phases a run
 * has no value for (the phase columns empty) are null, never zero.
 */
export function comparePdRuns(runs: readonly PdComparedRun[]): PdComparison[] | undefined {
  if (runs.length < 2 || !runs.some((entry) => isPdRun(entry.run))) return undefined;
  const [baseline, ...others] = runs as [PdComparedRun, ...PdComparedRun[]];
  const baselinePhases = runPhaseStatistics(baseline.run);
  return others.map((other) => {
    const otherPhases = runPhaseStatistics(other.run);
    const moves: PdPhaseMove[] = [];
    for (const phase of PD_COMPARED_PHASES) {
      const before = baselinePhases.get(phase) ?? null;
      const after = otherPhases.get(phase) ?? null;
      for (const statistic of ['p50', 'p99'] as const) {
        const baselineMs = before === 'none' ? 0 : before === null ? null : before[statistic] * 1000;
        const comparedMs = after === 'none' ? 0 : after === null ? null : after[statistic] * 1000;
        const changeMs = baselineMs === null || comparedMs === null ? null : comparedMs - baselineMs;
        moves.push({
          phase,
          statistic,
          baselineMs: before === 'none' ? null : baselineMs,
          comparedMs: after === 'none' ? null : comparedMs,
          changeMs,
          changeShare: changeMs === null || baselineMs === null || baselineMs === 0 ? null : changeMs / baselineMs,
        });
      }
    }
    return { baseline: baseline.label, compared: other.label, baselineGpus: gpusOf(baseline.run), comparedGpus: gpusOf(other.run), moves };
  });
}

function msText(value: number | null): string {
  if (value === null) return '-';
  return Math.abs(value) >= 100 ? value.toFixed(1) : value.toFixed(2);
}

function signedMs(value: number): string {
  return `${value >= 0 ? '+' : '−'}${msText(Math.abs(value))} ms`;
}

/** How many of the largest moves the summary sentence names. */
const MOVES_NAMED = 4;

/**
 * The section as text: per compared run, a table of the phases (baseline, compared, change) and one sentence naming
 * the phases that moved most, by absolute change.
 */
export function formatPdComparison(comparisons: readonly PdComparison[]): string {
  const lines: string[] = ['', 'Prefill/decode phases (ms; a phase a co-located run does not have reads "none" there and counts as 0 in the change):'];
  for (const comparison of comparisons) {
    lines.push('', `compared: ${comparison.compared}`, `baseline: ${comparison.baseline}`);
    if (comparison.baselineGpus !== comparison.comparedGpus) {
      lines.push(`  Caution: the baseline ran on ${comparison.baselineGpus} GPUs and the compared run on ${comparison.comparedGpus}; a PD comparison is fair on the same number.`);
    }
    // Labels can be long (the settings that differ): the columns say which run, the two lines above which is which.
    lines.push(`  ${'phase'.padEnd(26)}${'baseline'.padStart(20)}${'compared'.padStart(20)}${'change'.padStart(24)}`);
    for (const move of comparison.moves) {
      const absentBefore = move.baselineMs === null && (move.phase === 'KV transfer' || move.phase === 'decode queue');
      const change = move.changeMs === null ? '-' : `${signedMs(move.changeMs)}${move.changeShare === null ? '' : ` (${move.changeShare >= 0 ? '+' : '−'}${Math.abs(move.changeShare * 100).toFixed(0)}%)`}`;
      lines.push(`  ${`${move.phase} ${move.statistic}`.padEnd(26)}${(absentBefore ? 'none' : msText(move.baselineMs)).padStart(20)}${msText(move.comparedMs).padStart(20)}${change.padStart(24)}`);
    }
    const moved = comparison.moves.filter((move) => move.changeMs !== null && move.changeMs !== 0).sort((first, second) => Math.abs(second.changeMs as number) - Math.abs(first.changeMs as number));
    lines.push(
      moved.length === 0
        ? '  No phase has a value in both runs to compare.'
        : `  Moved most: ${moved.slice(0, MOVES_NAMED).map((move) => `${move.phase} ${move.statistic} ${signedMs(move.changeMs as number)}`).join(', ')}.`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export const COMPARE_PD_CSV = 'compare-pd.csv';

/** compare-pd.csv: one row per compared run, phase and statistic. */
export function pdComparisonCsv(comparisons: readonly PdComparison[]): string {
  const header = csvLine(['baseline', 'compared', 'baseline_gpus', 'compared_gpus', 'phase', 'statistic', 'baseline_ms', 'compared_ms', 'change_ms', 'change_share']);
  const rows = comparisons.flatMap((comparison) =>
    comparison.moves.map((move) =>
      csvLine([csvField(comparison.baseline), csvField(comparison.compared), String(comparison.baselineGpus), String(comparison.comparedGpus), move.phase, move.statistic, cell(move.baselineMs), cell(move.comparedMs), cell(move.changeMs), cell(move.changeShare)]),
    ),
  );
  return [header, ...rows].join('');
}

function cell(value: number | null): string {
  return value === null ? '' : String(Math.round(value * 1e6) / 1e6);
}
