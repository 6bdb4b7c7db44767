import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

/** The built CLI's --twin-sensitivity: its parsing, `off`, and the terminal block a virtual run prints. */
const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-twin-sensitivity-cli-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const virtualRun = (name: string, flags: string[]) =>
  runCli(['node', '--virtual-time', '--profile', fastProfile, '--num-prompts', '40', '--request-rate', '5', '--random-input-len', '32', '--random-output-len', '8', '--progress', 'off', '--output-dir', join(workDirectory, name), ...flags]);

describe('servelab node --twin-sensitivity', () => {
  it('takes a percentage (with or without %): the terminal says e and where it came from, summary.json the same', async () => {
    const result = await virtualRun('given', ['--twin-sensitivity', '2.5%']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Twin sensitivity: step times \+-2\.5% \(--twin-sensitivity\) move\n {2}throughput /);
    expect(result.stdout).not.toMatch(/not trustworthy/);
    const summary = JSON.parse(await readFile(join(workDirectory, 'given', 'summary.json'), 'utf8')) as { extras: { twinSensitivity: Record<string, unknown> } };
    expect(summary.extras.twinSensitivity).toMatchObject({ stepErrorPercent: 2.5, source: 'flag', untrusted: [] });
  });

  it('off: no band, no block; a value that is neither auto, off nor a percentage in (0, 100) is refused, naming them', async () => {
    const off = await virtualRun('off', ['--twin-sensitivity', 'off']);
    expect(off.code).toBe(0);
    expect(off.stdout).not.toMatch(/Twin sensitivity/);
    const summary = JSON.parse(await readFile(join(workDirectory, 'off', 'summary.json'), 'utf8')) as { extras?: Record<string, unknown> };
    expect(summary.extras?.['twinSensitivity']).toBeUndefined();
    for (const bad of ['often', '0', '100', '-2']) {
      const refused = await virtualRun(`bad-${bad}`, ['--twin-sensitivity', bad]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/expected a step error in percent above 0 and below 100 \(e\.g\. 2\.5 or 2\.5%\), auto \(the profile's own\) or off/);
    }
  });

  it('is in --help with its default', async () => {
    const help = await runCli(['node', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/--twin-sensitivity <percent\|auto\|off> .*\(default: auto: the profile's held-out step error, else an assumed 5%\)/);
  });
});
