import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startForeignEngine, type ForeignEngine } from '../../bench/foreign-engine/start-foreign-engine.js';
import { runCli } from '../helpers/cli.js';
import { requireTool } from '../helpers/require-tool.js';

const pythonMissing = requireTool('python3', 'python3');

let engine: ForeignEngine | undefined;
let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-foreign-'));
  if (pythonMissing === undefined) engine = await startForeignEngine(['--max-running-requests', '8', '--max-total-tokens', '4096', '--chunked-prefill-size', '256']);
});
afterAll(async () => {
  await engine?.stop();
  await rm(workDirectory, { recursive: true, force: true });
});

interface JsonRecord {
  success?: boolean;
  queue_time_start?: number;
  queue_time_end?: number;
  server_first_token_time?: number;
  server_finish_time?: number;
  expected_output_length?: number;
  actual_output_tokens?: number;
}

describe.skipIf(pythonMissing !== undefined)('the foreign engine (bench/foreign-engine, Python standard library)', () => {
  it.each(['sglang', 'openai-completions'])("takes servelab's node test over %s and every request is recorded", async (protocol) => {
    const output = join(workDirectory, protocol);
    const run = await runCli(
      ['node', '--target', 'attach', '--url', (engine as ForeignEngine).url, '--protocol', protocol, '--dataset-name', 'random-ids',
        '--random-input-len', '300', '--random-range-ratio', '0.3', '--random-output-len', '12', '--request-rate', '40', '--num-prompts', '30',
        '--seed', '2', '--output-dir', output, '--progress', 'off', '--quiet'],
      { timeoutMs: 90_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const records = readFileSync(join(output, 'requests.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as JsonRecord);
    expect(records).toHaveLength(30);
    expect(records.every((record) => record.success === true && record.actual_output_tokens === record.expected_output_length)).toBe(true);
    if (protocol !== 'sglang') return;
    // The native protocol carries the engine's scheduler stamps: queued, left the queue, first token, finished, in order.
    for (const record of records) {
      const stamps = [record.queue_time_start, record.queue_time_end, record.server_first_token_time, record.server_finish_time];
      expect(stamps.every((stamp) => typeof stamp === 'number'), JSON.stringify(record)).toBe(true);
      const [queued, forward, first, finished] = stamps as number[];
      expect(queued).toBeLessThanOrEqual(forward as number);
      expect(forward).toBeLessThan(first as number);
      expect(first).toBeLessThan(finished as number);
    }
  });
});
