import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, test } from 'vitest';
import { loadProfile } from '../../src/engine/profile/load-profile.js';
import type { MeasuredProfile, RooflineProfile } from '../../src/types/engine.js';
import { runCli } from '../helpers/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const BUILT = existsSync(join(ROOT, 'dist', 'src', 'experiments', 'validate-profiles.js'));

/**
 * The black box: a sim-server whose steps are slow enough (35 ms and more) that this shared machine's scheduling
 * delays (several ms at times) stay a small share of a TTFT, behind the built CLI in its own process; calibrate knows
 * only its URL. (At 15 ms steps a TTFT p90 came out 24% off on a machine busy with other work.)
 */
const BLACK_BOX: RooflineProfile = {
  kind: 'roofline',
  name: 'black-box',
  description: 'test',
  model: 'test/black-box',
  hardware: 'none',
  derivation: [],
  coefficients: { stepOverheadMs: 5, weightsFloorMs: 30, prefillPerTokenMs: 0.06, prefillAttentionPerPairMs: 3e-6, decodePerSequenceMs: 0.5, kvReadPerTokenMs: 1e-4 },
  maxTotalTokens: 60_000,
  contextLength: 8192,
};

const directory = mkdtempSync(join(tmpdir(), 'servelab-calibrate-validation-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function startBlackBox(args: string[]): Promise<{ url: string; stop: () => void }> {
  const profileFile = join(directory, 'black-box.json');
  writeFileSync(profileFile, JSON.stringify(BLACK_BOX));
  const child = spawn(process.execPath, [MAIN, 'sim-server', '--port', '0', '--profile', profileFile, ...args], { cwd: ROOT });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('sim-server did not start')), 15_000);
    lines.on('line', (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

describe.skipIf(!BUILT)('servelab calibrate validates the twin end to end (built CLI)', () => {
  test('a mixing sim-server: the twin of the recommended profile within 15% at both rates, the error written into the profile files; --refit refits it to the validation runs, checked rate by rate on runs its fit did not see', { timeout: 400_000 }, async () => {
    const server = await startBlackBox(['--max-running-requests', '16', '--chunked-prefill-size', '512', '--enable-mixed-chunk']);
    try {
      const output = join(directory, 'roofline.json');
      const measured = join(directory, 'measured.json');
      const result = await runCli([
        'calibrate', '--url', server.url, '--output', output, '--measured-output', measured,
        '--repeats', '1', '--decode-tokens', '8', '--kv-prompt-lengths', '32,256', '--validation-seconds', '8', '--refit', '--quiet',
      ], { cwd: ROOT, timeoutMs: 380_000 });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/Validation will take about \d+ s \(--no-validate skips it\)/);
      const recommended = /Recommended: (measured|roofline)/.exec(result.stdout)?.[1];
      expect(recommended, result.stdout).toBeDefined();
      const file = recommended === 'measured' ? measured : output;
      const profile = loadProfile(file) as RooflineProfile | MeasuredProfile;
      expect(profile.scheduling?.mixedChunk).toBe(true);
      const validation = profile.validation;
      expect(validation?.rates).toHaveLength(2);
      const [light, heavy] = validation?.rates ?? [];
      expect(light!.requestRate).toBeLessThan(heavy!.requestRate);
      // The table the terminal printed is the one in the file.
      const printedWorst = new RegExp(`${recommended}:[\\s\\S]*?worst ${validation!.worstErrorPercent.toFixed(1)}%`);
      expect(result.stdout).toMatch(printedWorst);
      expect(validation!.worstErrorPercent, `${result.stdout}\n${JSON.stringify(validation)}`).toBeLessThanOrEqual(15);
      // Each figure's verdict, with the server run's own interval where it has one (latencies; not throughput).
      for (const rate of validation!.rates) {
        expect(rate.verdicts?.throughput).toEqual({ verdict: 'within target' });
        expect(rate.verdicts?.ttftP90.noiseLowPercent).toBeLessThan(0);
        expect(rate.verdicts?.ttftP90.noiseHighPercent).toBeGreaterThan(0);
      }
      // Both profiles carry their own validation.
      const other = loadProfile(recommended === 'measured' ? output : measured) as RooflineProfile | MeasuredProfile;
      expect(other.validation?.rates).toHaveLength(2);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toHaveProperty('validation.description');

      // --refit: the recommended profile refitted to the validation's two server runs, beside it.
      expect(result.stdout).toContain(`Refit of ${recommended} to the validation's server runs`);
      const refitFile = file.replace(/\.json$/, '-refit.json');
      const refit = loadProfile(refitFile) as RooflineProfile | MeasuredProfile;
      expect(refit.kind).toBe(profile.kind);
      expect(refit.derivation.join(' ')).toContain("Refit by calibrate's refit to its validation runs");
      expect(refit.derivation.join(' ')).toContain('No run was held out (every run fitted)');
      // Its validation: each of the two rates checked by a refit fitted on the other rate's run alone.
      expect(refit.validation?.description).toContain("each rate checked by a refit fitted on the other rates' runs only");
      expect(refit.validation?.rates.map((rate) => rate.requestRate)).toEqual(validation!.rates.map((rate) => rate.requestRate));
      const printedScheduling = /scheduling: prefill (mixed into|steps apart from) decode steps/.exec(result.stdout)?.[1];
      expect(refit.scheduling?.mixedChunk).toBe(printedScheduling === 'mixed into');
      // The recommendation after the refit follows the two RMS figures the file holds.
      const refitRms = refit.validation!.rmsErrorPercent!.toFixed(1);
      const startRms = validation!.rmsErrorPercent!.toFixed(1);
      const last = [...result.stdout.matchAll(/^Recommended: .*$/gm)].at(-1)?.[0];
      expect(last).toBe(
        Number(refitRms) < Number(startRms)
          ? `Recommended: ${recommended}-refit (RMS ${refitRms}% on rates its fit did not see, against ${startRms}%); use --profile ${refitFile}`
          : `Recommended: still ${recommended} (the refit's RMS on rates its fit did not see, ${refitRms}%, is not below its ${startRms}%); use --profile ${file}`,
      );
    } finally {
      server.stop();
    }
  });
});
