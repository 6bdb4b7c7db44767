import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import type { Clock } from '../../src/clock/clock.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import type { ClientLimits, ClientRequest, ClientTimeouts, ProtocolClient } from '../../src/types/client.js';
import type { ClientOutcome, ErrorClass } from '../../src/types/record.js';
import type { ScriptedAnswer, ScriptedServer, ScriptStep } from './helpers/scripted-server.js';
import { sleep, sseEvent, startScriptedServer } from './helpers/scripted-server.js';
import { ObservedClock, writeAndAwaitRead } from './helpers/observed-clock.js';
import { closedPort, startBlackholeListener, startGarbageServer } from './helpers/unreachable.js';
import type { ProtocolWire } from './helpers/wires.js';
import { PROMPT_TOKENS } from './helpers/wires.js';

/** Real time between scripted chunks where a test needs them to arrive as separate reads. */
const SETTLE_MS = 20;

export function requestFor(requestId: string, signal?: AbortSignal): ClientRequest {
  return {
    requestId,
    workload: { datasetIndex: 0, prompt: 'one two three four five six seven eight', inputLength: 8, outputLength: 32 },
    signal,
  };
}

interface ClientSetup {
  stream?: boolean;
  clock?: Clock;
  timeouts?: ClientTimeouts;
  maxConnections?: number;
  apiKey?: string;
  limits?: ClientLimits;
}

export type HttpTransportName = 'socket' | 'undici';

/** Every error class a client can produce; the suite checks that each one is reached by some test. */
const ALL_ERROR_CLASSES: ErrorClass[] = [
  'connect_refused',
  'connect_timeout',
  'first_byte_timeout',
  'idle_timeout',
  'total_timeout',
  'http_4xx',
  'http_5xx',
  'stream_truncated',
  'malformed_stream',
  'server_error',
  'aborted',
  'harness_limit',
  'protocol_error',
  'http_3xx',
  'network_error',
];

/**
 * The conformance suite every protocol client runs: real scripted HTTP servers on 127.0.0.1, one scenario per
 * behaviour of docs/metrics.md and every error class of `ErrorClass`.
 */
export function runClientConformance(wire: ProtocolWire, httpTransport: HttpTransportName): void {
  const keys = wire.serverTiming === undefined ? '' : ` with SGLang ${wire.serverTiming.generation} timing keys`;
  describe(`${wire.protocol} client conformance${keys} over ${httpTransport}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    const reachedErrors = new Set<ErrorClass>();

    afterEach(async () => {
      while (cleanups.length > 0) await cleanups.pop()?.();
    });

    async function serve(script: (index: number) => ScriptedAnswer): Promise<ScriptedServer> {
      let count = 0;
      const server = await startScriptedServer(() => script(count++));
      cleanups.push(() => server.close());
      return server;
    }

    function client(baseUrl: string, setup: ClientSetup = {}): ProtocolClient {
      const created = createProtocolClient(wire.protocol, {
        baseUrl,
        stream: setup.stream ?? true,
        sampling: { temperature: 0, ignoreEos: true },
        model: 'test-model',
        apiKey: setup.apiKey,
        timeouts: setup.timeouts,
        maxConnections: setup.maxConnections,
        limits: setup.limits,
        httpTransport,
        clock: setup.clock ?? systemClock,
      });
      cleanups.push(() => created.close());
      return created;
    }

    function expectFailure(outcome: ClientOutcome, error: ErrorClass): void {
      expect(outcome.success).toBe(false);
      expect(outcome.error).toBe(error);
      expect(typeof outcome.errorMessage).toBe('string');
      expect((outcome.errorMessage ?? '').length).toBeGreaterThan(0);
      expect((outcome.errorMessage ?? '').length).toBeLessThanOrEqual(300);
      reachedErrors.add(error);
    }

    /** A stream of `tokens` events, one token each, the clock moved by `gapMs` before each. */
    function steadyStream(clock: ObservedClock, tokens: number, firstMs: number, gapMs: number): ScriptStep[] {
      const steps: ScriptStep[] = [];
      for (let token = 1; token <= tokens; token++) {
        steps.push({ run: () => clock.advanceBy(token === 1 ? firstMs : gapMs) });
        steps.push(...writeAndAwaitRead(clock, sseEvent(wire.tokenEvent(token, { finish: token === tokens ? 'length' : undefined }))));
      }
      for (const trailing of wire.trailingEvents(PROMPT_TOKENS, tokens)) steps.push({ write: sseEvent(trailing) });
      steps.push({ write: sseEvent('[DONE]') }, { end: true });
      return steps;
    }

    it('measures a normal stream: arrival, first token, finish, ITL and tokens', async () => {
      const clock = new ObservedClock(1000);
      const server = await serve(() => ({ steps: steadyStream(clock, 4, 50, 10) }));
      const outcome = await client(server.url, { clock, apiKey: 'secret-key' }).send(requestFor('req-normal'));

      expect(outcome.success).toBe(true);
      expect(outcome.error).toBeUndefined();
      expect(outcome.httpStatus).toBe(200);
      expect(outcome.arrivalTime).toBeCloseTo(clock.toEpochSeconds(1000), 6);
      expect((outcome.firstTokenTime ?? 0) - (outcome.arrivalTime ?? 0)).toBeCloseTo(0.05, 6);
      expect((outcome.finishTime ?? 0) - (outcome.firstTokenTime ?? 0)).toBeCloseTo(0.03, 6);
      expect(outcome.interTokenLatencies).toHaveLength(3);
      for (const gap of outcome.interTokenLatencies ?? []) expect(gap).toBeCloseTo(0.01, 9);
      expect(outcome.actualOutputTokens).toBe(4);
      expect(outcome.finishReason).toBe('length');

      const recorded = server.requests[0];
      expect(recorded?.method).toBe('POST');
      expect(recorded?.path).toBe(wire.path);
      expect(recorded?.headers['x-request-id']).toBe('req-normal');
      expect(recorded?.headers['authorization']).toBe('Bearer secret-key');
      expect(recorded?.headers['content-type']).toBe('application/json');
      expect(recorded?.body?.['stream']).toBe(true);
      expect(JSON.stringify(outcome)).not.toContain('secret-key');
    });

    it('spreads a chunk that carries several tokens evenly over them', async () => {
      const clock = new ObservedClock(0);
      const withUsage = !wire.countsTokensWithoutUsage;
      const server = await serve(() => ({
        steps: [
          { run: () => clock.advanceBy(40) },
          ...writeAndAwaitRead(clock, sseEvent(wire.tokenEvent(1, { withUsage }))),
          { run: () => clock.advanceBy(30) },
          ...writeAndAwaitRead(clock, sseEvent(wire.tokenEvent(4, { withUsage }))),
          { run: () => clock.advanceBy(8) },
          { write: sseEvent(wire.tokenEvent(6, { finish: 'length', withUsage })) },
          ...wire.trailingEvents(PROMPT_TOKENS, 6).map((data) => ({ write: sseEvent(data) })),
          { write: sseEvent('[DONE]') },
          { end: true },
        ],
      }));
      const outcome = await client(server.url, { clock }).send(requestFor('req-multi'));

      expect(outcome.success).toBe(true);
      expect(outcome.actualOutputTokens).toBe(6);
      const gaps = outcome.interTokenLatencies ?? [];
      expect(gaps).toHaveLength(5);
      for (const gap of gaps.slice(0, 3)) expect(gap).toBeCloseTo(0.01, 9);
      for (const gap of gaps.slice(3)) expect(gap).toBeCloseTo(0.004, 9);
    });

    it('parses events split across chunks and several events in one chunk', async () => {
      const events = [1, 2, 3].map((token) => sseEvent(wire.tokenEvent(token, { finish: token === 3 ? 'stop' : undefined })));
      const bytes = Buffer.from(events.join('') + wire.trailingEvents(PROMPT_TOKENS, 3).map(sseEvent).join('') + sseEvent('[DONE]'));
      const cut = Math.floor(events[0]!.length / 2);
      const server = await serve(() => ({
        steps: [
          { write: bytes.subarray(0, cut) },
          { delayMs: SETTLE_MS },
          { write: bytes.subarray(cut, bytes.length - 3) },
          { delayMs: SETTLE_MS },
          { write: bytes.subarray(bytes.length - 3) },
          { end: true },
        ],
      }));
      const outcome = await client(server.url).send(requestFor('req-split'));
      expect(outcome.success).toBe(true);
      expect(outcome.actualOutputTokens).toBe(3);
      expect(outcome.finishReason).toBe('stop');
      expect(outcome.interTokenLatencies).toHaveLength(2);
    });

    it('reports an error event inside a 200 stream as server_error with its message', async () => {
      const server = await serve(() => ({
        steps: [
          { write: sseEvent(wire.tokenEvent(1)) },
          { write: sseEvent(wire.errorEvent('the scheduler ran out of memory')) },
          { write: sseEvent('[DONE]') },
          { end: true },
        ],
      }));
      const outcome = await client(server.url).send(requestFor('req-error-event'));
      expectFailure(outcome, 'server_error');
      expect(outcome.errorMessage).toContain('the scheduler ran out of memory');
      expect(outcome.httpStatus).toBe(200);
    });

    it('reports a stream that ends before its final chunk as stream_truncated, keeping what arrived', async () => {
      const server = await serve(() => ({
        steps: [
          { write: sseEvent(wire.tokenEvent(1)) },
          { delayMs: SETTLE_MS },
          { write: sseEvent(wire.tokenEvent(2)) },
          { end: true },
        ],
      }));
      const outcome = await client(server.url).send(requestFor('req-truncated'));
      expectFailure(outcome, 'stream_truncated');
      expect(outcome.firstTokenTime).toBeDefined();
      expect(outcome.finishTime).toBeUndefined();
      expect(outcome.interTokenLatencies).toHaveLength(1);
    });

    it('reports a connection cut mid-stream as stream_truncated', async () => {
      const server = await serve(() => ({
        steps: [{ write: sseEvent(wire.tokenEvent(1)) }, { delayMs: SETTLE_MS }, { destroy: true }],
      }));
      const outcome = await client(server.url).send(requestFor('req-cut'));
      expectFailure(outcome, 'stream_truncated');
    });

    it('reports an event that is not JSON as malformed_stream', async () => {
      const server = await serve(() => ({
        steps: [{ write: sseEvent(wire.tokenEvent(1)) }, { write: sseEvent('{"text": "unterminated') }, { delayMs: 500 }, { end: true }],
      }));
      const outcome = await client(server.url).send(requestFor('req-malformed'));
      expectFailure(outcome, 'malformed_stream');
    });

    it('reports a 4xx answer with its status and the body message', async () => {
      const server = await serve(() => ({
        status: 400,
        headers: { 'content-type': 'application/json' },
        steps: [{ write: JSON.stringify({ error: { message: 'max_new_tokens is too large' } }) }, { end: true }],
      }));
      const outcome = await client(server.url).send(requestFor('req-400'));
      expectFailure(outcome, 'http_4xx');
      expect(outcome.httpStatus).toBe(400);
      expect(outcome.errorMessage).toContain('max_new_tokens is too large');
    });

    it('reports a 5xx answer with its status and a message cut to 300 characters', async () => {
      const server = await serve(() => ({
        status: 503,
        headers: { 'content-type': 'text/plain' },
        steps: [{ write: `upstream unavailable ${'x'.repeat(1000)}` }, { end: true }],
      }));
      const outcome = await client(server.url).send(requestFor('req-503'));
      expectFailure(outcome, 'http_5xx');
      expect(outcome.httpStatus).toBe(503);
      expect(outcome.errorMessage).toContain('upstream unavailable');
      expect(outcome.errorMessage).toHaveLength(300);
    });

    it('reports slow response headers as first_byte_timeout', async () => {
      const server = await serve(() => ({ headerDelayMs: 600, steps: [{ end: true }] }));
      const outcome = await client(server.url, { timeouts: { firstByteMs: 100 } }).send(requestFor('req-slow-headers'));
      expectFailure(outcome, 'first_byte_timeout');
      expect(outcome.arrivalTime).toBeDefined();
    });

    it('reports a long gap between chunks as idle_timeout', async () => {
      const server = await serve(() => ({
        steps: [{ write: sseEvent(wire.tokenEvent(1)) }, { delayMs: 600 }, { write: sseEvent(wire.tokenEvent(2)) }, { end: true }],
      }));
      const outcome = await client(server.url, { timeouts: { idleMs: 100 } }).send(requestFor('req-idle'));
      expectFailure(outcome, 'idle_timeout');
      expect(outcome.firstTokenTime).toBeDefined();
    });

    it('reports a request that outlives its total deadline as total_timeout', async () => {
      const steps: ScriptStep[] = [];
      for (let token = 1; token <= 20; token++) steps.push({ write: sseEvent(wire.tokenEvent(token)) }, { delayMs: 30 });
      let wroteAll = false;
      steps.push({ run: () => (wroteAll = true) }, { end: true });
      const server = await serve(() => ({ steps }));
      const outcome = await client(server.url, { timeouts: { totalMs: 150, idleMs: 1000 } }).send(requestFor('req-total'));
      expectFailure(outcome, 'total_timeout');
      // Cut at the deadline, not at the end: the server was still in its 20 × 30 ms script (its timers come due after
      // the client's 150 ms one, however busy the machine).
      expect(wroteAll).toBe(false);
    });

    it('reports a port with nothing listening as connect_refused', async () => {
      const port = await closedPort();
      const outcome = await client(`http://127.0.0.1:${port}`).send(requestFor('req-refused'));
      expectFailure(outcome, 'connect_refused');
      expect(outcome.arrivalTime).toBeUndefined();
    });

    it('reports a connect that never completes as connect_timeout', async () => {
      const blackhole = await startBlackholeListener();
      cleanups.push(() => blackhole.close());
      const outcome = await client(blackhole.url, { timeouts: { connectMs: 150 } }).send(requestFor('req-connect-timeout'));
      expectFailure(outcome, 'connect_timeout');
    });

    it('reports an answer that is not HTTP as protocol_error', async () => {
      const garbage = await startGarbageServer();
      cleanups.push(() => garbage.close());
      const outcome = await client(garbage.url).send(requestFor('req-garbage'));
      expectFailure(outcome, 'protocol_error');
    });

    it('reports a redirect as http_3xx (the client follows none)', async () => {
      const server = await serve(() => ({ status: 307, headers: { location: '/elsewhere' }, steps: [{ end: true }] }));
      const outcome = await client(server.url).send(requestFor('req-redirect'));
      expectFailure(outcome, 'http_3xx');
      expect(outcome.httpStatus).toBe(307);
    });

    it("reports an answer past the client's in-flight body budget as harness_limit", async () => {
      // A line that never ends, longer than the whole budget: the client holds it, so it passes the budget.
      const server = await serve(() => ({ steps: [{ write: `data: ${'x'.repeat(4096)}` }, { delayMs: 2000 }, { end: true }] }));
      const outcome = await client(server.url, { limits: { maxInFlightBodyBytes: 1024 } }).send(requestFor('req-budget'));
      expectFailure(outcome, 'harness_limit');
    });

    it('reports a request still in flight when the client is closed past its grace period as network_error', async () => {
      const server = await serve(() => ({ steps: [{ write: sseEvent(wire.tokenEvent(1)) }, { delayMs: 10_000 }, { end: true }] }));
      // Made here, not by client(): it is closed by the test itself, and undici refuses a second close.
      const protocolClient = createProtocolClient(wire.protocol, {
        baseUrl: server.url,
        stream: true,
        sampling: { temperature: 0, ignoreEos: true },
        model: 'test-model',
        httpTransport,
        clock: systemClock,
      });
      const pending = protocolClient.send(requestFor('req-closed'));
      await sleep(20);
      await protocolClient.close();
      expectFailure(await pending, 'network_error');
    });

    it('stops a request in flight when its signal aborts, and never sends one whose signal already aborted', async () => {
      const server = await serve(() => ({
        steps: [{ write: sseEvent(wire.tokenEvent(1)) }, { delayMs: 2000 }, { end: true }],
      }));
      const clock = new ObservedClock(0);
      const protocolClient = client(server.url, { clock });
      const controller = new AbortController();
      const pending = protocolClient.send(requestFor('req-abort', controller.signal));
      // Abort once the first chunk was stamped (one clock read at the write, one at the chunk).
      for (let waitedMs = 0; clock.reads < 2 && waitedMs < 5000; waitedMs++) await sleep(1);
      controller.abort();
      const outcome = await pending;
      expectFailure(outcome, 'aborted');
      expect(outcome.firstTokenTime).toBeDefined();

      const before = server.requests.length;
      const late = await protocolClient.send(requestFor('req-abort-late', controller.signal));
      expectFailure(late, 'aborted');
      expect(server.requests.length).toBe(before);
    });

    it('measures a non-streaming answer', async () => {
      const clock = new ObservedClock(0);
      const server = await serve(() => ({
        headers: { 'content-type': 'application/json' },
        steps: [{ run: () => clock.advanceBy(120) }, { write: wire.wholeBody(PROMPT_TOKENS, 4, 'length') }, { end: true }],
      }));
      const outcome = await client(server.url, { stream: false, clock }).send(requestFor('req-whole'));
      expect(outcome.success).toBe(true);
      expect(server.requests[0]?.body?.['stream']).toBe(false);
      expect((outcome.finishTime ?? 0) - (outcome.arrivalTime ?? 0)).toBeCloseTo(0.12, 6);
      expect(outcome.firstTokenTime).toBe(outcome.finishTime);
      expect(outcome.actualOutputTokens).toBe(4);
      expect(outcome.actualPromptTokens).toBe(PROMPT_TOKENS);
      expect(outcome.cachedTokens).toBe(2);
      expect(outcome.finishReason).toBe('length');
      expect(outcome.interTokenLatencies).toBeUndefined();
    });

    const timing = wire.serverTiming;
    if (timing !== undefined) {
      it(`reads the ${timing.generation} server timing keys by presence, on a stream and on a whole answer`, async () => {
        const clock = new ObservedClock(0);
        const streamServer = await serve(() => ({ steps: steadyStream(clock, 6, 20, 5) }));
        const streamed = await client(streamServer.url, { clock }).send(requestFor('req-timing'));
        expect(streamed.success).toBe(true);
        expect(streamed.actualOutputTokens).toBe(6);
        expect(streamed.numRetractions).toBe(0);
        for (const [key, value] of Object.entries(timing.expected)) {
          const actual = streamed[key as keyof ClientOutcome];
          if (typeof value === 'number') expect(actual, key).toBeCloseTo(value, 6);
          else expect(actual, key).toEqual(value);
        }

        const wholeServer = await serve(() => ({
          headers: { 'content-type': 'application/json' },
          steps: [{ write: wire.wholeBody(PROMPT_TOKENS, 4, 'length') }, { end: true }],
        }));
        const whole = await client(wholeServer.url, { stream: false }).send(requestFor('req-timing-whole'));
        expect(whole.success).toBe(true);
        expect(whole.serverCreatedTime).toBeCloseTo(timing.expected.serverCreatedTime ?? 0, 6);
        expect(whole.serverFirstTokenTime).toBeCloseTo(timing.expected.serverFirstTokenTime ?? 0, 6);
        expect(whole.serverFinishTime).toBeCloseTo(timing.expected.serverFinishTime ?? 0, 6);
      });
    }

    it('reuses keep-alive connections and opens no more than maxConnections', async () => {
      const server = await serve(() => ({
        steps: [
          { delayMs: 30 },
          { write: sseEvent(wire.tokenEvent(1, { finish: 'length' })) },
          ...wire.trailingEvents(PROMPT_TOKENS, 1).map((data) => ({ write: sseEvent(data) })),
          { write: sseEvent('[DONE]') },
          { end: true },
        ],
      }));
      const protocolClient = client(server.url, { maxConnections: 2 });
      const outcomes = await Promise.all([1, 2, 3, 4, 5, 6].map((index) => protocolClient.send(requestFor(`req-pool-${index}`))));
      for (const outcome of outcomes) expect(outcome.success).toBe(true);
      expect(server.connectionCount()).toBeLessThanOrEqual(2);
      const again = await protocolClient.send(requestFor('req-pool-again'));
      expect(again.success).toBe(true);
      expect(server.connectionCount()).toBeLessThanOrEqual(2);
    });

    it('exercised every error class', () => {
      expect([...reachedErrors].sort()).toEqual([...ALL_ERROR_CLASSES].sort());
    });
  });
}
