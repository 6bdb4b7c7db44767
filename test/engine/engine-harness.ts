import { createEngine, resolveEngineSetup } from '../../src/engine/create-engine.js';
import type { EngineSettings } from '../../src/engine/create-engine.js';
import type { SimEngine, StepPlan } from '../../src/engine/core/sim-engine.js';
import type { EngineRequestInput, EngineRequestView } from '../../src/types/engine.js';

export interface TokenRecord {
  id: string;
  timeMs: number;
  outputTokens: number;
}

export interface Harness {
  engine: SimEngine;
  tokens: TokenRecord[];
  finished: Map<string, EngineRequestView>;
  steps: { plan: StepPlan; runningAfterBegin: number; usedAfterBegin: number }[];
}

export function makeHarness(settings: EngineSettings): Harness {
  const tokens: TokenRecord[] = [];
  const finished = new Map<string, EngineRequestView>();
  const engine = createEngine(resolveEngineSetup(settings), {
    onToken: (view, timeMs) => tokens.push({ id: view.id, timeMs, outputTokens: view.outputTokens }),
    onFinish: (view, timeMs) => {
      if (finished.has(view.id)) throw new Error(`${view.id} finished twice`);
      if (view.finishedMs !== timeMs) throw new Error('finish time mismatch');
      finished.set(view.id, view);
    },
  });
  return { engine, tokens, finished, steps: [] };
}

export interface TimedArrival {
  atMs: number;
  input: EngineRequestInput;
}

/**
 * A minimal discrete-event loop for tests: submits arrivals when their time comes and runs steps back to back, jumping
 * over idle gaps. Records the plan and the engine's load right after each beginStep.
 */
export function runArrivals(harness: Harness, arrivals: TimedArrival[], startMs = 0, maxSteps = 1_000_000): number {
  const sorted = arrivals.slice().sort((left, right) => left.atMs - right.atMs);
  let nowMs = startMs;
  let next = 0;
  for (let step = 0; step < maxSteps; step++) {
    while (next < sorted.length && (sorted[next] as TimedArrival).atMs <= nowMs) {
      harness.engine.submit((sorted[next] as TimedArrival).input, (sorted[next] as TimedArrival).atMs);
      next++;
    }
    const plan = harness.engine.beginStep(nowMs);
    if (plan === null) {
      if (next >= sorted.length) return nowMs;
      nowMs = Math.max(nowMs, (sorted[next] as TimedArrival).atMs);
      continue;
    }
    const load = harness.engine.load();
    harness.steps.push({ plan: { ...plan, work: { ...plan.work } }, runningAfterBegin: load.runningRequests, usedAfterBegin: load.usedTokens });
    nowMs += plan.durationMs;
    harness.engine.completeStep(nowMs);
  }
  throw new Error('the engine did not finish within maxSteps');
}

export function tokenIds(count: number, offset = 0): number[] {
  return Array.from({ length: count }, (_unused, index) => 1000 + offset + index);
}
