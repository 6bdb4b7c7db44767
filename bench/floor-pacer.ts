import { rateAndCv } from './arrival-figures.js';

/**
 * The do-nothing floor pacer, the same-run baseline of the pacing benchmarks: it reads the clock on every turn of the
 * event loop and "sends" a request by noting the instant, with no client and no records. Whatever lag and CV it shows
 * come from the machine (the host taking the CPU away, interrupts, other processes on the core), not from any pacer,
 * so no event-loop pacer can do better on the same core at the same moment. It spins, so its CPU means nothing.
 */
export interface FloorFigures {
  /** Achieved rate (req/s) and inter-arrival CV of the noted instants. */
  rate: number;
  cv: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
}

/** Follows the schedule (ms offsets from its start, non-decreasing) and returns the figures of its "sends". */
export async function runFloorPacer(offsetsMs: Float64Array): Promise<FloorFigures> {
  const count = offsetsMs.length;
  const sentMs = new Float64Array(count);
  const t0Ms = performance.now() + 5;
  let next = 0;
  await new Promise<void>((resolve) => {
    const check = (): void => {
      const nowMs = performance.now();
      while (next < count && t0Ms + (offsetsMs[next] as number) <= nowMs) sentMs[next++] = nowMs;
      if (next >= count) resolve();
      else setImmediate(check);
    };
    setImmediate(check);
  });
  const lagsMs = Float64Array.from(sentMs, (instantMs, index) => instantMs - t0Ms - (offsetsMs[index] as number)).sort();
  const pick = (fraction: number): number => lagsMs[Math.min(count - 1, Math.floor(fraction * (count - 1)))] as number;
  return {
    ...rateAndCv(sentMs, 1000),
    lagP50Ms: pick(0.5),
    lagP99Ms: pick(0.99),
    lagMaxMs: lagsMs[count - 1] as number,
  };
}

