import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimServer, type RunningSimServer } from '../../src/engine/http/start-sim-server.js';
import { runCli } from '../helpers/cli.js';

/**
 * An attached server's request log (--server-request-log-dir): the simulated engine stands in for the server, and the
 * directory holds lines shaped like SGLang's exporter writes them (see test/fixtures/server-request-logs/README.md).
 */
let workDirectory: string;
let server: RunningSimServer;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-attach-logs-'));
  server = await startSimServer({ profile: { kind: 'simple', stepMs: 2 } });
});
afterAll(async () => {
  await server.close();
  await rm(workDirectory, { recursive: true, force: true });
});

describe('node test attached to a server with --server-request-log-dir', () => {
  it('copies its request log into the run, joins the lines to the records and counts the rest', async () => {
    const logDirectory = join(workDirectory, 'server-logs');
    await mkdir(logDirectory);
    const line = (id: string, received: number) =>
      JSON.stringify({ request_parameters: JSON.stringify({ rid: id, stream: true }), id, completion_tokens: 4, cached_tokens: 8, request_received_ts: received, request_finished_ts: received + 0.1 });
    await writeFile(join(logDirectory, 'sglang-request-metrics-20261123_08.log'), [line('att-0', 1763884800), line('att-1', 1763884801), line('other-9', 1763884802)].join('\n') + '\n');
    const outputDir = join(workDirectory, 'run');
    const result = await runCli([
      'node', '--target', 'attach', '--url', server.url, '--server-request-log-dir', logDirectory, '--protocol', 'openai-completions',
      '--num-prompts', '3', '--request-rate', 'inf', '--random-input-len', '8', '--random-output-len', '4', '--run-id', 'att',
      '--output-dir', outputDir, '--progress', 'off',
    ]);
    expect(result.code).toBe(0);
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { extras?: { serverRequestLogs?: Record<string, unknown> } };
    expect(summary.extras?.serverRequestLogs).toMatchObject({ lines: 3, joinedRecords: 2, unjoinedLines: 1, malformedLines: 0, recordsWithoutLine: 1 });
    expect(result.stdout + result.stderr).toMatch(/server request logs: 1 of 3 lines match no request of this run.*1 requests have no line/);
    expect(await readdir(join(outputDir, 'logs', 'server-request-logs', 'attached'))).toEqual(['sglang-request-metrics-20261123_08.log']);
  });
});
