import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachableHostileServer } from '../helpers/attachable-hostile-server.js';
import { runCli } from '../helpers/cli.js';

/**
 * `--http-transport` picks the HTTP client under the protocol clients. Told apart from outside by an answer only one
 * of them reads: a 32 KiB response head. The lean socket pool takes heads up to 64 KiB; undici's `Pool` stops at
 * Node's default of 16 KiB (its maxHeaderSize, which the transport leaves as it is).
 */
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-http-transport-cli-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const event = (completionTokens: number, finish: boolean): string =>
  `data: ${JSON.stringify({ text: 'x', meta_info: { id: 'r', completion_tokens: completionTokens, finish_reason: finish ? { type: 'length' } : null } })}\n\n`;

async function successes(url: string, name: string, transport: string): Promise<{ code: number | null; success: string[] }> {
  const outputDir = join(workDirectory, name);
  const result = await runCli([
    'node', '--target', 'attach', '--url', url, '--num-prompts', '4', '--request-rate', 'inf', '--random-input-len', '8',
    '--random-output-len', '4', '--random-range-ratio', '1', '--warmup-requests', '0', '--output-dir', outputDir, '--progress', 'off', '--quiet',
    '--http-transport', transport,
  ]);
  const [header, ...lines] = (await readFile(join(outputDir, 'requests.csv'), 'utf8')).trim().split('\n');
  const successColumn = (header as string).split(',').indexOf('success');
  return { code: result.code, success: lines.map((line) => line.split(',')[successColumn] as string) };
}

describe('servelab node --http-transport', () => {
  it('socket reads a 32 KiB response head, undici refuses it: the flag reaches the client', async () => {
    const url = await attachableHostileServer((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'x-padding': 'p'.repeat(32 * 1024) });
      response.end(`${event(1, false)}${event(4, true)}data: [DONE]\n\n`);
    });
    const socketRun = await successes(url, 'socket', 'socket');
    const undiciRun = await successes(url, 'undici', 'undici');
    expect(socketRun.code).toBe(0);
    expect(undiciRun.code).toBe(0);
    expect(socketRun.success).toEqual(Array(4).fill('true'));
    expect(undiciRun.success).toEqual(Array(4).fill('false'));
  });
});
