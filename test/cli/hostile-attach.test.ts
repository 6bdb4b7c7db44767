import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachableHostileServer as hostileServer } from '../helpers/attachable-hostile-server.js';
import { runCli } from '../helpers/cli.js';

/**
 * The built CLI against hostile servers on loopback (issue 11): each run must finish with exit 0 and write every
 * request as a record with its error class. The servers are written here: SGLang's /generate shape with impossible
 * values; /health answers 200 so that the attach target accepts them.
 */
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-hostile-cli-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const event = (completionTokens: number, extra: Record<string, unknown> = {}, finish = false): string =>
  `data: ${JSON.stringify({ text: 'x', meta_info: { id: 'r', completion_tokens: completionTokens, finish_reason: finish ? { type: 'length' } : null, ...extra } })}\n\n`;

async function runAgainst(url: string, name: string, extraFlags: string[] = []): Promise<{ code: number | null; rows: Record<string, string>[]; summary: Record<string, unknown> }> {
  const outputDir = join(workDirectory, name);
  const result = await runCli([
    'node', '--target', 'attach', '--url', url, '--num-prompts', '4', '--request-rate', 'inf', '--random-input-len', '8',
    '--random-output-len', '16', '--random-range-ratio', '1', '--warmup-requests', '0', '--output-dir', outputDir, '--progress', 'off', '--quiet', ...extraFlags,
  ]);
  const [header, ...lines] = (await readFile(join(outputDir, 'requests.csv'), 'utf8')).trim().split('\n');
  const columns = (header as string).split(',');
  // The columns read here (error, actual_output_tokens) come before the first free-text column.
  const rows = lines.map((line) => Object.fromEntries(line.split(',').map((value, index) => [columns[index], value])));
  const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as Record<string, unknown>;
  return { code: result.code, rows, summary };
}

describe('servelab node against hostile servers', () => {
  it('a 300,000,000-token event: every request a malformed_stream record, exit 0', async () => {
    const url = await hostileServer((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`${event(1)}${event(300_000_000)}${event(300_000_000, {}, true)}data: [DONE]\n\n`);
    });
    const { code, rows } = await runAgainst(url, 'tokens');
    expect(code).toBe(0);
    expect(rows).toHaveLength(4);
    expect(rows.map((row) => row['error'])).toEqual(Array(4).fill('malformed_stream'));
  });

  it('server timestamps from 1970 and the year 3000: the requests succeed, the timestamps are left empty and counted', async () => {
    const url = await hostileServer((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`${event(1, { forward_entry_time: 12.5, queue_time: 0.1 })}${event(16, { request_received_ts: 32_503_680_000, prompt_tokens: 8 }, true)}data: [DONE]\n\n`);
    });
    const { code, rows, summary } = await runAgainst(url, 'timestamps');
    expect(code).toBe(0);
    expect(rows.map((row) => row['success'])).toEqual(Array(4).fill('true'));
    expect(rows.every((row) => row['server_created_time'] === '' && row['queue_time_end'] === '')).toBe(true);
    const quality = (summary['metrics'] as { dataQuality: { recordsAffected: number; removedFields: Record<string, number> } }).dataQuality;
    expect(quality.recordsAffected).toBe(4);
    expect(quality.removedFields['serverCreatedTime:outside_run']).toBe(4);
  });

  it('a server that sends headers and stalls: idle_timeout records under a short --idle-timeout, exit 0', async () => {
    const url = await hostileServer((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
    });
    const { code, rows } = await runAgainst(url, 'stall', ['--idle-timeout', '300']);
    expect(code).toBe(0);
    expect(rows.map((row) => row['error'])).toEqual(Array(4).fill('idle_timeout'));
  });
});
