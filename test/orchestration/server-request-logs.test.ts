import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { joinRunRequestLogs, joinServerRequestLogs, requestLogNotice } from '../../src/orchestration/server-request-logs.js';
import type { RequestRecord } from '../../src/types/record.js';

/** Lines shaped after SGLang's request-metrics exporter (see the fixture's README). */
const FIXTURE_DIRECTORY = fileURLToPath(new URL('../fixtures/server-request-logs/', import.meta.url));
const FIXTURE_BASE = 1763884801.1; // request_received_ts of run-a-0

function record(requestId: string, fields: Partial<RequestRecord> = {}): RequestRecord {
  return { requestId, datasetIndex: 0, warmup: false, inputLength: 32, expectedOutputLength: 4, scheduledTime: 1763884801, success: true, ...fields };
}

let workDirectory: string;
beforeEach(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-request-logs-'));
});
afterEach(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('joining SGLang request-log lines to records by request id', () => {
  it('fills the server columns a record lacks, keeps what the stream said, and counts what could not be joined', async () => {
    const warmup = record('run-a-warmup-0', { warmup: true });
    const openAiStreamed = record('run-a-0', { actualOutputTokens: 4 }); // an OpenAI stream: no timing keys, no cached tokens
    const notStreamed = record('run-a-1');
    const fromStream = record('run-a-2', { serverCreatedTime: 1763884801.399, cachedTokens: 3 });
    const neverFinished = record('run-a-3', { success: false, error: 'total_timeout' });
    const runLogs = join(workDirectory, 'run', 'logs');

    const joined = await joinServerRequestLogs(
      [{ name: 'attached', directory: FIXTURE_DIRECTORY, copy: true }],
      [openAiStreamed, notStreamed, fromStream, neverFinished],
      [warmup],
      runLogs,
    );

    expect(joined).toMatchObject({ lines: 6, joinedRecords: 4, unjoinedLines: 1, malformedLines: 1, recordsWithoutLine: 1, missingDirectories: [] });
    // The attached server's files are kept in the run directory.
    expect(await readdir(join(runLogs, 'server-request-logs', 'attached'))).toEqual(['sglang-request-metrics-20261123_08.log']);
    expect(joined.files).toEqual([join(runLogs, 'server-request-logs', 'attached', 'sglang-request-metrics-20261123_08.log')]);

    expect(openAiStreamed.serverCreatedTime).toBeCloseTo(FIXTURE_BASE, 6);
    expect(openAiStreamed.serverDispatchTime).toBeCloseTo(FIXTURE_BASE + 0.004, 6);
    expect(openAiStreamed.queueTimeEnd).toBeCloseTo(FIXTURE_BASE + 0.02, 6);
    expect(openAiStreamed.queueTimeStart).toBeCloseTo(FIXTURE_BASE + 0.005, 6);
    expect(openAiStreamed.serverFirstTokenTime).toBeCloseTo(FIXTURE_BASE + 0.06, 6);
    expect(openAiStreamed.serverResponseSentTime).toBeCloseTo(FIXTURE_BASE + 0.0605, 6);
    expect(openAiStreamed.serverFinishTime).toBeCloseTo(FIXTURE_BASE + 0.2, 6);
    expect(openAiStreamed.prefillWaitingLatency).toBe(0.0004);
    expect(openAiStreamed.prefillLaunchLatency).toBe(0.0011);
    expect(openAiStreamed.decodeThroughputTokensPerSecond).toBe(21.4);
    expect(openAiStreamed.cachedTokens).toBe(16);
    expect(openAiStreamed.actualPromptTokens).toBe(32);
    expect(openAiStreamed.numRetractions).toBe(0);

    // Not streamed: the line's response_sent_to_client_ts is when the answer left.
    expect(notStreamed.serverResponseSentTime).toBeCloseTo(1763884801.2 + 0.2001, 6);
    expect(notStreamed.actualOutputTokens).toBe(4);
    // The request log is a tracing source: its completion_tokens is the first users' output_tokens_from_trace.
    expect(notStreamed.outputTokensFromTrace).toBe(4);
    expect(neverFinished.outputTokensFromTrace).toBeUndefined();

    // What the stream already said wins.
    expect(fromStream.serverCreatedTime).toBe(1763884801.399);
    expect(fromStream.cachedTokens).toBe(3);
    expect(fromStream.serverFinishTime).toBeCloseTo(1763884801.6, 6);

    expect(warmup.serverCreatedTime).toBeCloseTo(1763884800.1, 6);
    expect(neverFinished.serverCreatedTime).toBeUndefined();

    const notice = requestLogNotice(joined);
    expect(notice).toContain('1 of 6 lines match no request of this run');
    expect(notice).toContain('1 lines are not request-log JSON');
    expect(notice).toContain('1 requests have no line');
  });

  it('reads a launched server\'s directory in place, finds per-server subdirectories, and counts a directory it cannot read', async () => {
    const perServer = join(workDirectory, 'logs');
    await mkdir(join(perServer, 'node-1'), { recursive: true });
    const line = (id: string) => JSON.stringify({ request_parameters: JSON.stringify({ rid: id, stream: true }), id, completion_tokens: 2, request_received_ts: 5.5 });
    await writeFile(join(perServer, 'node-1', 'sglang-request-metrics-20261123_09.log'), `${line('r-0')}\n`);
    await writeFile(join(perServer, 'sglang-request-metrics-20261123_08.log'), `${line('r-1')}\n`);
    await writeFile(join(perServer, 'node-1.log'), 'not a request log\n');
    const records = [record('r-0'), record('r-1')];

    const joined = await joinServerRequestLogs(
      [
        { name: 'nodes', directory: perServer, copy: false },
        { name: 'gone', directory: join(workDirectory, 'missing'), copy: false },
      ],
      records,
      [],
      join(workDirectory, 'run-logs'),
    );
    expect(joined).toMatchObject({ lines: 2, joinedRecords: 2, unjoinedLines: 0, recordsWithoutLine: 0, missingDirectories: [join(workDirectory, 'missing')] });
    expect(joined.files).toEqual([join(perServer, 'node-1', 'sglang-request-metrics-20261123_09.log'), join(perServer, 'sglang-request-metrics-20261123_08.log')]);
    expect(records.map((each) => each.serverCreatedTime)).toEqual([5.5, 5.5]);
    expect(requestLogNotice(joined)).toContain(`could not read ${join(workDirectory, 'missing')}`);
  });

  it('reports nothing for a run without request logs, and no notice when every line and record joined', async () => {
    expect(await joinRunRequestLogs({ servers: [], attachedDirectory: undefined, records: [], warmupRecords: [], runLogsPath: workDirectory })).toBeUndefined();
    const directory = join(workDirectory, 'server');
    await mkdir(directory);
    await writeFile(join(directory, 'sglang-request-metrics-20261123_08.log'), `${JSON.stringify({ request_parameters: '{}', id: 'only', completion_tokens: 1 })}\n`);
    const result = await joinRunRequestLogs({
      servers: [{ name: 'sglang', url: 'http://127.0.0.1:1', requestLogDirectory: directory, stop: async () => undefined }],
      attachedDirectory: undefined,
      records: [record('only')],
      warmupRecords: [],
      runLogsPath: workDirectory,
    });
    expect(result?.join.joinedRecords).toBe(1);
    expect(result?.notice).toBeUndefined();
    expect(await readFile(join(directory, 'sglang-request-metrics-20261123_08.log'), 'utf8')).toContain('"only"');
  });
});

describe('joining a PD request\'s two request-log lines on rid and bootstrap_room', () => {
  /** A line as SGLang's exporter writes it: request_parameters as JSON text (the room a 63-bit integer), then meta_info. */
  function logLine(rid: string, room: string, meta: Record<string, number>): string {
    return JSON.stringify({ request_parameters: `{"rid": "${rid}", "stream": true, "bootstrap_host": "127.0.0.1", "bootstrap_port": 8998, "bootstrap_room": ${room}}`, id: rid, prompt_tokens: 512, completion_tokens: 1, cached_tokens: 0, ...meta });
  }

  it('fills the server columns from the decode line, the phases from both, and refuses a line of another room', async () => {
    const base = 1763884801;
    // 2^63 - 25: a double would round it, so only a text read keeps it equal to the record's room.
    const room = '9223372036854775783';
    const pd = record('pd-0', { bootstrapRoom: room, prefillHost: 'http://127.0.0.1:1', decodeHost: 'http://127.0.0.1:2' });
    const unrouted = record('pd-1'); // a record whose room the trace did not give: it comes from the line
    const prefillDirectory = join(workDirectory, 'prefill');
    const decodeDirectory = join(workDirectory, 'decode');
    await mkdir(prefillDirectory, { recursive: true });
    await mkdir(decodeDirectory, { recursive: true });
    await writeFile(
      join(prefillDirectory, 'sglang-request-metrics-20261123_08.log'),
      [
        // dispatched at +0.004, forward at +0.030 (queue 0.026), prefill done at +0.080 (forward 0.050), finished at +0.095 (transfer 0.015)
        logLine('pd-0', room, { request_received_ts: base, api_server_dispatch_finish_ts: base + 0.004, forward_entry_time: base + 0.03, prefill_finished_time: base + 0.08, queue_time: 0.001, request_finished_ts: base + 0.095 }),
        logLine('pd-1', '17', { request_received_ts: base, forward_entry_time: base + 0.01, prefill_finished_time: base + 0.02, request_finished_ts: base + 0.025 }),
        // Same rid, another room: an earlier run's request with a reused id, not this one.
        logLine('pd-0', '9223372036854775782', { request_received_ts: base, forward_entry_time: base + 0.5, prefill_finished_time: base + 0.6, request_finished_ts: base + 0.7 }),
      ].join('\n') + '\n',
    );
    await writeFile(
      join(decodeDirectory, 'sglang-request-metrics-20261123_08.log'),
      [
        logLine('pd-0', room, { request_received_ts: base + 0.001, forward_entry_time: base + 0.1, queue_time: 0.003, prefill_finished_time: base + 0.1, response_sent_to_client_ts: base + 0.101, request_finished_ts: base + 0.4 }),
        logLine('pd-1', '17', { request_received_ts: base + 0.001, forward_entry_time: base + 0.04, queue_time: 0.002, request_finished_ts: base + 0.2 }),
      ].join('\n') + '\n',
    );
    const joined = await joinServerRequestLogs(
      [
        { name: 'node-0', directory: prefillDirectory, copy: false, role: 'prefill' },
        { name: 'node-1', directory: decodeDirectory, copy: false, role: 'decode' },
      ],
      [pd, unrouted],
      [],
      join(workDirectory, 'logs'),
    );
    expect(joined).toMatchObject({ lines: 5, joinedRecords: 2, roomMismatchLines: 1, pdJoinedRecords: 2, recordsWithoutLine: 0 });
    // The decode server answered: its line, not the prefill server's, gives the server columns.
    expect(pd.serverCreatedTime).toBeCloseTo(base + 0.001, 6);
    expect(pd.serverFinishTime).toBeCloseTo(base + 0.4, 6);
    expect(pd.prefillQueueTime).toBeCloseTo(0.026, 6);
    expect(pd.prefillForwardTime).toBeCloseTo(0.05, 6);
    expect(pd.kvTransferTime).toBeCloseTo(0.015, 6);
    expect(pd.decodeQueueTime).toBeCloseTo(0.003, 6);
    expect(pd.bootstrapRoom).toBe(room);
    expect(unrouted.bootstrapRoom).toBe('17');
    // No api_server_dispatch_finish_ts: the queue counts from the request's arrival.
    expect(unrouted.prefillQueueTime).toBeCloseTo(0.01, 6);
    expect(requestLogNotice(joined)).toMatch(/1 lines carry a request's id but not the bootstrap_room the router gave it/);
  });

  it('leaves the phases empty outside PD, where a server has no role', async () => {
    const plain = record('plain-0');
    const directory = join(workDirectory, 'plain');
    await mkdir(directory, { recursive: true });
    await writeFile(join(directory, 'sglang-request-metrics-20261123_08.log'), `${logLine('plain-0', '5', { request_received_ts: 1763884801, forward_entry_time: 1763884801.01, prefill_finished_time: 1763884801.02, request_finished_ts: 1763884801.03, queue_time: 0.001 })}\n`);
    const joined = await joinServerRequestLogs([{ name: 'node-0', directory, copy: false }], [plain], [], join(workDirectory, 'logs'));
    expect(joined.pdJoinedRecords).toBeUndefined();
    expect(plain.prefillQueueTime).toBeUndefined();
    expect(plain.kvTransferTime).toBeUndefined();
    expect(plain.decodeQueueTime).toBeUndefined();
  });
});
