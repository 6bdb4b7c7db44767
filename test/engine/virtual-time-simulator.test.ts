import { describe, expect, test } from 'vitest';
import { VirtualTimeSimulator } from '../../src/engine/virtual/virtual-time-simulator.js';
import type { EngineRequestView } from '../../src/types/engine.js';
import { SeededRandom } from '../../src/utils/random.js';
import { makeHarness, runArrivals, tokenIds } from './engine-harness.js';
import type { TimedArrival } from './engine-harness.js';

interface Finished {
  engine: number;
  view: EngineRequestView;
  timeMs: number;
}

describe('VirtualTimeSimulator', () => {
  test('timers fire in time order with the engine events (timers first at the same instant), and a timer can submit work', async () => {
    const seen: string[] = [];
    const sim = await VirtualTimeSimulator.create({
      engines: 1,
      settings: { profile: { kind: 'simple', stepMs: 10 } },
      events: { onToken: (_engine, view, timeMs) => seen.push(`token ${view.id} ${timeMs}`), onFinish: () => undefined, onStepCompleted: (_engine, timeMs) => seen.push(`step ${timeMs}`) },
    });
    sim.submit(0, { id: 'a', promptTokenIds: tokenIds(4), maxNewTokens: 2 }, 0);
    sim.at(20, (timeMs) => seen.push(`timer ${timeMs}`));
    sim.at(5, (timeMs) => {
      seen.push(`timer ${timeMs}`);
      sim.submit(0, { id: 'b', promptTokenIds: tokenIds(4, 50), maxNewTokens: 1 }, timeMs);
    });
    expect(sim.nextEventMs()).toBe(0);
    sim.advanceTo(15);
    expect(seen).toEqual(['timer 5', 'token a 10', 'step 10']);
    expect(sim.runUntilIdle()).toBe(30);
    // b arrived at 5, mid-step: its prefill is the step from 10 to 20, then a decodes its second token from 20 to 30.
    expect(seen).toEqual(['timer 5', 'token a 10', 'step 10', 'timer 20', 'token b 20', 'step 20', 'token a 30', 'step 30']);
    expect(() => sim.at(29, () => undefined)).toThrow(/virtual time is already 30 ms/);
  });

  test('one engine: the exact timeline of the simple profile', async () => {
    const tokens: number[] = [];
    const finished: Finished[] = [];
    const sim = await VirtualTimeSimulator.create({
      engines: 1,
      settings: { profile: { kind: 'simple', stepMs: 10 } },
      events: { onToken: (_engine, _view, timeMs) => tokens.push(timeMs), onFinish: (engine, view, timeMs) => finished.push({ engine, view, timeMs }) },
    });
    sim.submit(0, { id: 'a', promptTokenIds: tokenIds(4), maxNewTokens: 3 }, 100);
    sim.submit(0, { id: 'b', promptTokenIds: tokenIds(4, 50), maxNewTokens: 3 }, 100);
    expect(sim.nextEventMs()).toBe(100);
    expect(sim.runUntilIdle()).toBe(130);
    // Submitted at the same instant: one shared prefill, then two decode steps.
    expect(tokens).toEqual([110, 110, 120, 120, 130, 130]);
    expect(finished.map((entry) => entry.view.forwardEntryMs)).toEqual([100, 100]);
    expect(sim.nextEventMs()).toBe(Number.POSITIVE_INFINITY);
  });

  test('a step-time scale lengthens or shortens every step by that factor (the sensitivity band), and 0 is refused', async () => {
    const timeline = async (stepTimeScale: number): Promise<number[]> => {
      const tokens: number[] = [];
      const sim = await VirtualTimeSimulator.create({
        engines: 1,
        settings: { profile: { kind: 'simple', stepMs: 10 } },
        stepTimeScale,
        events: { onToken: (_engine, _view, timeMs) => tokens.push(timeMs), onFinish: () => undefined },
      });
      sim.submit(0, { id: 'a', promptTokenIds: tokenIds(4), maxNewTokens: 3 }, 100);
      sim.runUntilIdle();
      return tokens;
    };
    expect(await timeline(1)).toEqual([110, 120, 130]);
    expect(await timeline(1.5)).toEqual([115, 130, 145]);
    expect(await timeline(0.5)).toEqual([105, 110, 115]);
    await expect(timeline(0)).rejects.toThrow(/step-time scale must be a finite number above 0/);
  });

  test('a request arriving exactly when a step ends joins the next step', async () => {
    const finished: Finished[] = [];
    const sim = await VirtualTimeSimulator.create({
      engines: 1,
      settings: { profile: { kind: 'simple', stepMs: 10 } },
      events: { onFinish: (engine, view, timeMs) => finished.push({ engine, view, timeMs }) },
    });
    sim.submit(0, { id: 'a', promptTokenIds: tokenIds(4), maxNewTokens: 5 }, 0);
    sim.submit(0, { id: 'b', promptTokenIds: tokenIds(4, 9), maxNewTokens: 1 }, 20);
    sim.runUntilIdle();
    const b = finished.find((entry) => entry.view.id === 'b')!;
    expect(b.view.forwardEntryMs).toBe(20);
    expect(b.timeMs).toBe(30);
  });

  test('matches the engine stepped by hand, request for request, on a random workload', async () => {
    const random = new SeededRandom(5);
    const arrivals: TimedArrival[] = [];
    let atMs = 0;
    for (let index = 0; index < 300; index++) {
      atMs += random.exponential(1 / 6);
      arrivals.push({ atMs, input: { id: `r${index}`, promptTokenIds: tokenIds(random.integer(10, 800), index * 7), maxNewTokens: random.integer(1, 120) } });
    }
    const settings = { profile: 'llama-3-8b-h100', maxRunningRequests: 16, chunkedPrefillSize: 512 };
    const harness = makeHarness(settings);
    runArrivals(harness, arrivals);
    const finished = new Map<string, number>();
    const sim = await VirtualTimeSimulator.create({ engines: 1, settings, events: { onFinish: (_engine, view, timeMs) => finished.set(view.id, timeMs) } });
    for (const arrival of arrivals) sim.submit(0, arrival.input, arrival.atMs);
    sim.runUntilIdle();
    expect(finished.size).toBe(300);
    for (const [id, view] of harness.finished) expect(finished.get(id)).toBeCloseTo(view.finishedMs, 9);
  });

  test('many engines run interleaved in global time order; load is visible between arrivals', async () => {
    const finishTimes: number[] = [];
    const perEngine = [0, 0, 0, 0];
    const sim = await VirtualTimeSimulator.create({
      engines: 4,
      settings: { profile: { kind: 'simple', stepMs: 5 } },
      events: {
        onFinish: (engine, _view, timeMs) => {
          finishTimes.push(timeMs);
          perEngine[engine]!++;
        },
      },
    });
    for (let index = 0; index < 400; index++) {
      const atMs = index * 0.5;
      sim.advanceTo(atMs);
      // Least-loaded routing from the engines' own state.
      let best = 0;
      for (let engine = 1; engine < 4; engine++) {
        const load = sim.load(engine);
        const bestLoad = sim.load(best);
        if (load.runningRequests + load.waitingRequests < bestLoad.runningRequests + bestLoad.waitingRequests) best = engine;
      }
      sim.submit(best, { id: `q${index}`, promptTokenIds: tokenIds(8, index), maxNewTokens: 10 }, atMs);
    }
    sim.runUntilIdle();
    expect(perEngine.reduce((sum, count) => sum + count, 0)).toBe(400);
    expect(Math.min(...perEngine)).toBeGreaterThan(80);
    // Events reach the orchestrator in non-decreasing virtual time.
    for (let index = 1; index < finishTimes.length; index++) expect(finishTimes[index]!).toBeGreaterThanOrEqual(finishTimes[index - 1]!);
  });

  test('submitting in the past is refused', async () => {
    const sim = await VirtualTimeSimulator.create({ engines: 1, settings: { profile: { kind: 'simple', stepMs: 1 } }, events: { onFinish: () => {} } });
    sim.advanceTo(50);
    expect(() => sim.submit(0, { id: 'late', promptTokenIds: [1], maxNewTokens: 1 }, 10)).toThrow(/virtual time is already 50/);
  });
});
