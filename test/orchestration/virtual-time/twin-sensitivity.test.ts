import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeTest } from '../../../src/index.js';
import { SENSITIVITY_REQUEST_LIMIT, skippedBand, stepErrorFor } from '../../../src/orchestration/virtual-time/twin-sensitivity.js';
import { twinSensitivityLines, twinSensitivityWarning } from '../../../src/report/twin-sensitivity-text.js';
import type { TwinSensitivity } from '../../../src/orchestration/virtual-time/twin-sensitivity.js';
import { summarize } from '../../../src/analysis/summarize.js';
import { formatTerminalSummary } from '../../../src/report/terminal/format-terminal-summary.js';
import type { RooflineProfile, SimpleProfile } from '../../../src/types/engine.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-twin-sensitivity-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

/**
 * Every step 10 ms and at most 4 requests running: each request holds a slot about 21 steps (its prefill and 20 output
 * tokens), so the engine serves about 19 requests a second. Rate 2 is light; rate 16 is near that capacity.
 */
const PROFILE: SimpleProfile = { kind: 'simple', name: 'step-10ms', stepMs: 10 };
const WORKLOAD = {
  virtualTime: true,
  datasetName: 'random-ids',
  randomInputLen: 100,
  randomOutputLen: 20,
  randomRangeRatio: 1,
  maxRunningRequests: 4,
  numPrompts: 300,
  seed: 3,
  progress: 'off',
} as const;

async function run(name: string, settings: Record<string, unknown>) {
  const result = await new NodeTest({ ...WORKLOAD, profile: JSON.stringify(PROFILE), ...settings, outputDir: join(workDirectory, name) }).run();
  const summaryJson = JSON.parse(await readFile(join(result.outputDirectory, 'summary.json'), 'utf8')) as { extras?: { twinSensitivity?: TwinSensitivity } };
  const terminal = formatTerminalSummary(result.run, summarize(result.run));
  const html = await readFile(join(result.outputDirectory, 'report.html'), 'utf8');
  return { result, band: summaryJson.extras?.twinSensitivity, terminal, html };
}

function banded(band: TwinSensitivity | undefined): Exclude<TwinSensitivity, { skipped: string }> {
  if (band === undefined || 'skipped' in band) throw new Error(`expected a band, got ${JSON.stringify(band)}`);
  return band;
}

const worstMove = (band: Exclude<TwinSensitivity, { skipped: string }>): number =>
  Math.max(...Object.values(band.metrics).flatMap((metric) => [metric.minusChangePercent, metric.plusChangePercent].map((change) => Math.abs(change ?? Infinity))));

describe("the twin's sensitivity band", () => {
  it('at light load is narrow (every metric within about e) and warns of nothing: summary.json, terminal, report.html', async () => {
    const { result, band: found, terminal, html } = await run('light', { requestRate: 2 });
    const band = banded(found);
    expect(band).toMatchObject({ stepErrorPercent: 5, source: 'assumed', targetPercent: 15, untrusted: [] });
    expect(band.sourceDetail).toMatch(/records no held-out step error/);
    expect(worstMove(band)).toBeLessThan(12);
    // Step times 5% longer make every decode step, and so TPOT, 5% longer at light load.
    expect(band.metrics.tpotP50.plusChangePercent).toBeCloseTo(5, 1);
    expect(band.metrics.tpotP50.minusChangePercent).toBeCloseTo(-5, 1);
    // The value "as run" is the run's own, as summary.json gives it.
    const summary = result.metrics;
    expect(band.metrics.ttftP50.atZero).toBeCloseTo(summary.latencies.ttft?.p50 as number, 5);
    expect(band.metrics.e2eP90.atZero).toBeCloseTo(summary.latencies.total_latency?.p90 as number, 5);
    expect(band.metrics.throughput.atZero).toBeCloseTo(summary.throughput.requestsPerSecond, 5);
    expect(terminal).toMatch(/Twin sensitivity: step times \+-5% \(assumed: the profile records no step error\) move\n {2}throughput [^\n]*TTFT p50 -\d\.\d%\/\+\d\.\d%/);
    expect(terminal).not.toMatch(/not trustworthy/);
    expect(html).toContain('How far to trust the twin');
    expect(html).not.toMatch(/not trustworthy/);
  });

  it('near capacity is wide (queueing amplifies the step error) and says which metrics cannot be trusted, and how far', async () => {
    const { band: found, terminal, html } = await run('near-capacity', { requestRate: 16 });
    const band = banded(found);
    const ttft = band.metrics.ttftP50;
    expect(Math.max(Math.abs(ttft.minusChangePercent ?? 0), Math.abs(ttft.plusChangePercent ?? 0))).toBeGreaterThan(30);
    // Longer steps mean longer waits, shorter steps shorter ones.
    expect(ttft.plusChangePercent).toBeGreaterThan(0);
    expect(ttft.minusChangePercent).toBeLessThan(0);
    expect(band.untrusted.map((entry) => entry.metric)).toContain('ttftP50');
    const worstTtft = band.untrusted.find((entry) => entry.metric === 'ttftP50')?.worstChangePercent as number;
    const line = terminal.split('\n').find((text) => text.startsWith('Warning: near capacity'));
    expect(line).toMatch(new RegExp(`TTFT p50 (is not trustworthy )?to better than ${Math.abs(worstTtft).toFixed(0)}%`));
    expect(line).toMatch(/step times \+-5% move them past the 15% target/);
    expect(html).toMatch(/<p class="warning">near capacity: the twin&#39;s TTFT p\d0 is not trustworthy to better than \d+%/);
  });

  it('--twin-sensitivity off runs no band; a percentage is taken as e (source: the flag)', async () => {
    const off = await run('off', { requestRate: 2, twinSensitivity: 'off' });
    expect(off.band).toBeUndefined();
    expect(off.terminal).not.toMatch(/Twin sensitivity/);
    expect(off.html).not.toContain('How far to trust the twin');
    const given = banded((await run('given', { requestRate: 2, twinSensitivity: 2 })).band);
    expect(given).toMatchObject({ stepErrorPercent: 2, source: 'flag' });
    expect(given.metrics.tpotP50.plusChangePercent).toBeCloseTo(2, 1);
    // summary.json keeps the figure; the terminal and report.html print it to two decimals.
    const fine = await run('fine', { requestRate: 2, twinSensitivity: 1.23456 });
    expect(banded(fine.band).stepErrorPercent).toBe(1.23456);
    expect(fine.html).toContain('every step 1.23% shorter and 1.23% longer; e = 1.23%');
    expect(fine.terminal).toContain('step times +-1.23% (--twin-sensitivity) move');
  });

  it('is refused as a setting outside (0, 100) or a word other than auto and off', () => {
    for (const twinSensitivity of [0, 100, -3, 'sometimes']) {
      expect(() => new NodeTest({ ...WORKLOAD, requestRate: 2, twinSensitivity } as never)).toThrow(/twinSensitivity.*auto, off, or a percentage above 0 and below 100/s);
    }
  });
});

describe('stepErrorFor', () => {
  const calibrated: RooflineProfile = {
    kind: 'roofline',
    name: 'calibrated',
    description: 'test',
    model: 'm',
    hardware: 'measured',
    // calibrate's line (src/engine/calibration/calibrate-profile.ts, describeQuality).
    derivation: ['Measured with servelab calibrate: 40 step times.', 'Fit error over all steps: 1.20% RMS, 3.40% at worst; 2.10% RMS (4.00% at worst) on 12 held-out steps.'],
    coefficients: { stepOverheadMs: 1, weightsFloorMs: 5, prefillPerTokenMs: 0.02, prefillAttentionPerPairMs: 1e-6, decodePerSequenceMs: 0.01, kvReadPerTokenMs: 5e-5 },
    maxTotalTokens: 100_000,
    contextLength: 8192,
  };

  it("takes the profile's held-out RMS step error, not its fit error", () => {
    expect(stepErrorFor(calibrated, 'auto')).toMatchObject({ percent: 2.1, source: 'profile held-out' });
    expect(stepErrorFor(calibrated, 'auto').detail).toMatch(/held-out RMS step error \(12 steps/);
  });

  it("reads calibrate's stepError field first, and the derivation line only for profiles calibrated before it", () => {
    const recorded: RooflineProfile = { ...calibrated, stepError: { fitRmsPercent: 1.2, fitMaxPercent: 3.4, heldOutRmsPercent: 3.3, heldOutMaxPercent: 6, heldOutSteps: 9 } };
    expect(stepErrorFor(recorded, 'auto')).toMatchObject({ percent: 3.3, source: 'profile held-out' });
    expect(stepErrorFor(recorded, 'auto').detail).toMatch(/\(9 steps/);
    // A fitted form's error over every step above its held-out one is the larger, so it is the one used.
    const fitAbove: RooflineProfile = { ...calibrated, stepError: { fitRmsPercent: 2.42, fitMaxPercent: 12.5, heldOutRmsPercent: 1.35, heldOutMaxPercent: 2.9, heldOutSteps: 18 } };
    expect(stepErrorFor(fitAbove, 'auto')).toMatchObject({ percent: 2.42, source: 'profile fit' });
    expect(stepErrorFor(fitAbove, 'auto').detail).toMatch(/above its 1\.35% on 18 held-out steps/);
    const noneHeldOut: RooflineProfile = { ...calibrated, derivation: [], stepError: { fitRmsPercent: 1.2, fitMaxPercent: 3.4, heldOutRmsPercent: null, heldOutMaxPercent: null, heldOutSteps: 0 } };
    expect(stepErrorFor(noneHeldOut, 'auto')).toMatchObject({ percent: 5, source: 'assumed' });
  });

  it('assumes 5% for a profile without one (no points held out, or not calibrated), and the flag wins over the profile', () => {
    const noHeldOut = { ...calibrated, derivation: ['Fit error over all steps: 1.20% RMS, 3.40% at worst; no points could be held out.'] };
    expect(stepErrorFor(noHeldOut, 'auto')).toMatchObject({ percent: 5, source: 'assumed' });
    expect(stepErrorFor(PROFILE, 'auto')).toMatchObject({ percent: 5, source: 'assumed' });
    expect(stepErrorFor(calibrated, 3.5)).toMatchObject({ percent: 3.5, source: 'flag' });
  });
});

describe('skippedBand', () => {
  const error = { percent: 2, source: 'flag', detail: '--twin-sensitivity' } as const;

  it('runs the band up to the request limit and says why not above it', () => {
    expect(skippedBand(error, SENSITIVITY_REQUEST_LIMIT)).toBeNull();
    const skipped = skippedBand(error, SENSITIVITY_REQUEST_LIMIT + 1);
    expect(skipped).toMatchObject({ stepErrorPercent: 2, source: 'flag', skipped: expect.stringMatching(/not run: 200001 requests, above the 200000 the band runs for/) as unknown });
    const text = twinSensitivityLines(skipped as TwinSensitivity);
    expect(text).toEqual([`Twin sensitivity: ${(skipped as { skipped: string }).skipped}`]);
    expect(twinSensitivityWarning(skipped as TwinSensitivity)).toBeNull();
  });
});

describe('twinSensitivityLines', () => {
  it("prints the profile's step error to two decimals at most", () => {
    const band = { stepErrorPercent: 2.3215, source: 'profile fit', sourceDetail: 'test', targetPercent: 15, metrics: {}, untrusted: [] } as unknown as TwinSensitivity;
    expect(twinSensitivityLines(band)[0]).toBe("Twin sensitivity: step times +-2.32% (the profile's step error over every measured step (above its held-out one)) move");
    expect(twinSensitivityLines({ ...band, stepErrorPercent: 2.1 } as TwinSensitivity)[0]).toMatch(/step times \+-2\.1% /);
  });
});
