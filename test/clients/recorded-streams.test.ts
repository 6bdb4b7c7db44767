import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProtocolName } from '../../src/clients/registry.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import type { ClientOutcome } from '../../src/types/record.js';
import { requestFor } from './conformance.js';
import type { ScriptStep } from './helpers/scripted-server.js';
import { ObservedClock, writeAndAwaitRead } from './helpers/observed-clock.js';
import { startScriptedServer } from './helpers/scripted-server.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/streams/', import.meta.url));
const EVENT_GAP_MS = 10;

interface RecordedCase {
  file: string;
  protocol: ProtocolName;
  expected: Partial<ClientOutcome>;
  /** Number of inter-token latencies (tokens after the first chunk's). */
  gaps: number;
  /** Which event (1-based) carries the first token; chat streams open with a role-only chunk. */
  firstTokenEvent?: number;
  /** Events between the last token and the finish_reason (OpenAI sends finish_reason in a chunk of its own). */
  finishLagEvents?: number;
}

/**
 * One set per SGLang generation (test/fixtures/streams/README.md names the commits they follow): the 2026 key set
 * (`sglang-2026/`) and the 2025 one (`sglang-2025/`), plus other OpenAI-compatible servers (`openai/`).
 */
const cases: RecordedCase[] = [
  {
    file: 'sglang-2026/generate-stream-enable-metrics.sse',
    protocol: 'sglang',
    gaps: 15,
    expected: {
      success: true,
      actualOutputTokens: 16,
      actualPromptTokens: 32,
      cachedTokens: 24,
      numRetractions: 0,
      finishReason: 'length',
      serverCreatedTime: 1763712000.412031,
      serverDispatchTime: 1763712000.416688,
      queueTimeEnd: 1763712000.437915,
      queueTimeStart: 1763712000.437915 - 0.019842,
      serverFirstTokenTime: 1763712000.489207,
      // Stamped on the first event and repeated on the final one, which must not be read as the finish.
      serverResponseSentTime: 1763712000.489655,
      serverFinishTime: 1763712000.703765,
      prefillWaitingLatency: 0.000412,
      prefillLaunchLatency: 0.001206,
      decodeThroughputTokensPerSecond: 74.91,
    },
  },
  {
    file: 'sglang-2026/generate-stream-plain.sse',
    protocol: 'sglang',
    gaps: 7,
    expected: {
      success: true,
      actualOutputTokens: 8,
      actualPromptTokens: 11,
      cachedTokens: 0,
      numRetractions: 0,
      finishReason: 'stop',
      serverCreatedTime: undefined,
      serverDispatchTime: undefined,
      queueTimeStart: undefined,
      queueTimeEnd: undefined,
      // Without --enable-metrics the only server time is the first event's send stamp (docs/protocols.md).
      serverFirstTokenTime: 1763712010.143028,
      serverResponseSentTime: 1763712010.143028,
      serverFinishTime: undefined,
      prefillWaitingLatency: undefined,
    },
  },
  {
    file: 'sglang-2026/generate-stream-abort.sse',
    protocol: 'sglang',
    gaps: 0,
    expected: {
      success: false,
      error: 'server_error',
      errorMessage: "(status 400): The input (40000 tokens) is longer than the model's context length",
      serverStatusCode: 400,
      finishReason: 'abort',
      actualPromptTokens: 40000,
      actualOutputTokens: 0,
    },
  },
  {
    file: 'sglang-2026/generate-stream-error-event.sse',
    protocol: 'sglang',
    gaps: 0,
    expected: { success: false, error: 'server_error', errorMessage: 'Detokenizer process exited unexpectedly.' },
  },
  {
    file: 'sglang-2026/completions-stream-usage.sse',
    protocol: 'openai-completions',
    // 8 tokens in 6 chunks: two chunks carry two tokens each, as their per-chunk usage says.
    gaps: 7,
    expected: { success: true, actualOutputTokens: 8, actualPromptTokens: 32, cachedTokens: 16, finishReason: 'length' },
  },
  {
    file: 'sglang-2025/generate-stream-enable-metrics-crlf.sse',
    protocol: 'sglang',
    gaps: 5,
    expected: {
      success: true,
      actualOutputTokens: 6,
      numRetractions: 1,
      finishReason: 'length',
      serverCreatedTime: 1752300000.1,
      serverDispatchTime: 1752300000.1035,
      serverFirstTokenTime: 1752300000.13125,
      serverResponseSentTime: 1752300000.131377,
      serverFinishTime: 1752300000.183112,
      decodeThroughputTokensPerSecond: 115.6,
      queueTimeEnd: undefined,
      prefillWaitingLatency: undefined,
    },
  },
  {
    file: 'sglang-2025/generate-stream-abort-waiting-queue.sse',
    protocol: 'sglang',
    gaps: 0,
    expected: { success: false, error: 'server_error', errorMessage: 'Abort in waiting queue', serverStatusCode: undefined, finishReason: 'abort', actualOutputTokens: 0 },
  },
  {
    file: 'openai/openai-chat-stream-usage.sse',
    protocol: 'openai-chat',
    gaps: 6,
    firstTokenEvent: 2,
    finishLagEvents: 1,
    expected: { success: true, actualOutputTokens: 7, actualPromptTokens: 14, cachedTokens: 0, finishReason: 'stop' },
  },
  {
    file: 'openai/vllm-chat-stream-continuous-usage.sse',
    protocol: 'openai-chat',
    gaps: 5,
    firstTokenEvent: 2,
    expected: { success: true, actualOutputTokens: 6, actualPromptTokens: 20, finishReason: 'length' },
  },
];

/** Splits raw SSE bytes after each blank line, keeping every byte (so `\r\n` files stay `\r\n`). */
function splitEvents(bytes: Buffer): Buffer[] {
  const events: Buffer[] = [];
  let start = 0;
  for (;;) {
    const lf = bytes.indexOf('\n\n', start);
    const crlf = bytes.indexOf('\r\n\r\n', start);
    const candidates = [lf < 0 ? -1 : lf + 2, crlf < 0 ? -1 : crlf + 4].filter((end) => end > 0);
    if (candidates.length === 0) break;
    const end = Math.min(...candidates);
    events.push(bytes.subarray(start, end));
    start = end;
  }
  if (start < bytes.length) events.push(bytes.subarray(start));
  return events;
}

describe('recorded streams replayed byte for byte', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()?.();
  });

  async function replay(recorded: RecordedCase, stepsFor: (bytes: Buffer, clock: ObservedClock) => ScriptStep[]) {
    const bytes = await readFile(FIXTURES + recorded.file);
    const clock = new ObservedClock(0);
    const server = await startScriptedServer(() => ({ steps: [...stepsFor(bytes, clock), { end: true }] }));
    cleanups.push(() => server.close());
    const client = createProtocolClient(recorded.protocol, {
      baseUrl: server.url,
      stream: true,
      sampling: { temperature: 0, ignoreEos: true },
      clock,
    });
    cleanups.push(() => client.close());
    return client.send(requestFor(`replay-${recorded.file}`));
  }

  for (const recorded of cases) {
    it(`${recorded.file}, one write per event`, async () => {
      const outcome = await replay(recorded, (bytes, clock) =>
        splitEvents(bytes).flatMap((event): ScriptStep[] => [
          { run: () => clock.advanceBy(EVENT_GAP_MS) },
          ...writeAndAwaitRead(clock, event),
        ]),
      );
      for (const [key, value] of Object.entries(recorded.expected)) {
        const actual = outcome[key as keyof ClientOutcome];
        if (typeof value === 'number' && !Number.isInteger(value)) expect(actual, key).toBeCloseTo(value, 6);
        else if (key === 'errorMessage') expect(actual, key).toContain(value);
        else expect(actual, key).toEqual(value);
      }
      expect(outcome.interTokenLatencies?.length ?? 0).toBe(recorded.gaps);
      if (recorded.expected.success === true) {
        expect((outcome.firstTokenTime ?? 0) - (outcome.arrivalTime ?? 0)).toBeCloseTo(((recorded.firstTokenEvent ?? 1) * EVENT_GAP_MS) / 1000, 6);
        const gapSum = (outcome.interTokenLatencies ?? []).reduce((sum, gap) => sum + gap, 0);
        // Every gap after the first token is accounted for exactly once, however many tokens a chunk carried.
        const finishLagSeconds = ((recorded.finishLagEvents ?? 0) * EVENT_GAP_MS) / 1000;
        expect(gapSum).toBeCloseTo((outcome.finishTime ?? 0) - (outcome.firstTokenTime ?? 0) - finishLagSeconds, 6);
      }
    });

    it(`${recorded.file}, cut into 7-byte slices`, async () => {
      const outcome = await replay(recorded, (bytes) => {
        const steps: ScriptStep[] = [];
        for (let offset = 0; offset < bytes.length; offset += 7) steps.push({ write: bytes.subarray(offset, offset + 7) });
        return steps;
      });
      expect(outcome.success).toBe(recorded.expected.success);
      for (const key of ['actualOutputTokens', 'finishReason', 'error'] as const) {
        if (key in recorded.expected) expect(outcome[key], key).toBe(recorded.expected[key]);
      }
      expect(outcome.interTokenLatencies?.length ?? 0).toBe(recorded.gaps);
    });
  }
});
