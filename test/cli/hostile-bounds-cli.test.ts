import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachableHostileServer as hostileServer } from '../helpers/attachable-hostile-server.js';
import { runCli } from '../helpers/cli.js';

/**
 * The built CLI against the hostile servers of issue 29, scaled down: server text that a run used to store whole, and
 * a stream kept "alive" by keep-alive comments only. Each run must end with exit 0 and every request a record.
 */
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-bounds-cli-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

async function runAgainst(url: string, name: string, extraFlags: string[] = []): Promise<{ code: number | null; records: Record<string, unknown>[] }> {
  const outputDir = join(workDirectory, name);
  const result = await runCli([
    'node', '--target', 'attach', '--url', url, '--num-prompts', '4', '--request-rate', 'inf', '--random-input-len', '8',
    '--random-output-len', '16', '--random-range-ratio', '1', '--warmup-requests', '0', '--output-dir', outputDir, '--progress', 'off', '--quiet', ...extraFlags,
  ]);
  const lines = (await readFile(join(outputDir, 'requests.jsonl'), 'utf8')).trim().split('\n');
  return { code: result.code, records: lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('servelab node against the hostile servers of issue 29', () => {
  it('a 1 MB finish_reason: the run completes and each record keeps 64 characters of it', async () => {
    const reason = 'r'.repeat(1024 * 1024);
    const url = await hostileServer((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`data: ${JSON.stringify({ text: 'x', meta_info: { id: 'r', completion_tokens: 16, finish_reason: { type: reason } } })}\n\ndata: [DONE]\n\n`);
    });
    const { code, records } = await runAgainst(url, 'finish-reason');
    expect(code).toBe(0);
    expect(records).toHaveLength(4);
    const stored = records.map((record) => String(record['finish_reason'] ?? record['finishReason']));
    expect(stored).toEqual(Array(4).fill('r'.repeat(64)));
  });

  it('keep-alive comments every 20 ms: idle_timeout under --idle-timeout 300, not a wait for the total deadline', async () => {
    const url = await hostileServer((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => response.write(': keep-alive\n\n'), 20);
      response.on('close', () => clearInterval(timer));
    });
    const { code, records } = await runAgainst(url, 'keep-alive', ['--idle-timeout', '300', '--total-timeout', '60000']);
    expect(code).toBe(0);
    expect(records.map((record) => record['error'])).toEqual(Array(4).fill('idle_timeout'));
  }, 60_000);
});
