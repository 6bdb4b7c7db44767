import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const BUILT = existsSync(MAIN) && existsSync(join(ROOT, 'dist', 'src', 'cli', 'commands', 'sim-server.js'));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(!BUILT)('servelab sim-server (built CLI)', () => {
  test('prints its URL and the SGLang ready line, serves, and exits cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [MAIN, 'sim-server', '--port', '0', '--profile', '{"kind":"simple","stepMs":2}'], { cwd: ROOT });
    const lines = createInterface({ input: child.stdout });
    const seen: string[] = [];
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line; saw ${JSON.stringify(seen)}`)), 10_000);
      lines.on('line', (line) => {
        seen.push(line);
        if (line === 'The server is fired up and ready to roll!') {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    expect(seen[0]).toMatch(/^servelab sim-server listening on http:\/\/127\.0\.0\.1:\d+$/);
    const url = seen[0]!.slice('servelab sim-server listening on '.length);
    expect(Number(new URL(url).port)).toBeGreaterThan(0);
    const response = await fetch(`${url}/generate`, { method: 'POST', body: JSON.stringify({ text: 'hi', sampling_params: { max_new_tokens: 2 } }) });
    expect(((await response.json()) as { meta_info: { completion_tokens: number } }).meta_info.completion_tokens).toBe(2);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  test('a bad option value is a one-line error naming the option, exit code 2', async () => {
    const result = await run(['sim-server', '--port', 'abc']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/--port must be an integer from 0 to 65535/);
    const policy = await run(['sim-server', '--schedule-policy', 'sjf']);
    expect(policy.code).toBe(2);
    expect(policy.stderr).toMatch(/--schedule-policy must be fcfs, lpm/);
    const profile = await run(['sim-server', '--port', '0', '--profile', 'nope']);
    expect(profile.code).toBe(2);
    expect(profile.stderr).toMatch(/unknown profile "nope"/);
  });

  test('--help teaches the options', async () => {
    const result = await run(['sim-server', '--help']);
    expect(result.code).toBe(0);
    for (const flag of ['--max-running-requests', '--chunked-prefill-size', '--max-total-tokens', '--schedule-policy', '--profile', 'llama-3-8b-h100']) {
      expect(result.stdout).toContain(flag);
    }
  });
});
