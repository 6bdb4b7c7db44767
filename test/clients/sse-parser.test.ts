import { describe, expect, it, vi } from 'vitest';
import { SseParser } from '../../src/clients/sse/sse-parser.js';

interface Received {
  data: string;
  eventType: string;
}

function parse(chunks: (string | Buffer)[]): { events: Received[]; truncated: boolean } {
  const events: Received[] = [];
  const parser = new SseParser((data, eventType) => events.push({ data, eventType }));
  for (const chunk of chunks) parser.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  return { events, truncated: parser.end() };
}

describe('SseParser', () => {
  it('delivers several events from one chunk, in order', () => {
    const { events, truncated } = parse(['data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n']);
    expect(events.map((event) => event.data)).toEqual(['{"a":1}', '{"a":2}', '[DONE]']);
    expect(events.every((event) => event.eventType === 'message')).toBe(true);
    expect(truncated).toBe(false);
  });

  it('gives the same events however the bytes are cut, down to one byte per chunk', () => {
    const body = Buffer.from('data: {"text":"héllo → 世界"}\r\n\r\n: keep-alive\n\nevent: done\ndata: [DONE]\n\n', 'utf8');
    const whole = parse([body]).events;
    expect(whole).toEqual([
      { data: '{"text":"héllo → 世界"}', eventType: 'message' },
      { data: '[DONE]', eventType: 'done' },
    ]);
    for (let size = 1; size <= 9; size++) {
      const chunks: Buffer[] = [];
      for (let offset = 0; offset < body.length; offset += size) chunks.push(body.subarray(offset, offset + size));
      expect(parse(chunks).events, `slices of ${size} bytes`).toEqual(whole);
    }
  });

  it('handles \\r\\n line ends, comments, multi-line data and ignored fields', () => {
    const { events } = parse([
      ': a comment\r\n',
      'id: 7\r\nretry: 1000\r\ndata: first line\r\ndata:second line\r\n\r\n',
      'event: update\ndata\n\n',
      'data: x\n\n',
    ]);
    // `data` without a colon is an empty data line: the event's data is "" and it is not delivered.
    expect(events).toEqual([
      { data: 'first line\nsecond line', eventType: 'message' },
      { data: 'x', eventType: 'message' },
    ]);
  });

  it('does not deliver an event without its closing blank line, and reports it at the end', () => {
    const { events, truncated } = parse(['data: {"a":1}\n\ndata: {"a":2}\n']);
    expect(events.map((event) => event.data)).toEqual(['{"a":1}']);
    expect(truncated).toBe(true);
    expect(parse(['data: {"a":1}\n\ndata: {"a"']).truncated).toBe(true);
  });

  it('does not keep a reference to a chunk the caller reuses', () => {
    const events: string[] = [];
    const parser = new SseParser((data) => events.push(data));
    const reused = Buffer.from('data: abc');
    parser.push(reused);
    reused.fill(0x7a);
    parser.push(Buffer.from('def\n\n'));
    expect(events).toEqual(['abcdef']);
  });

  it('accepts a plain Uint8Array chunk', () => {
    const events: string[] = [];
    const parser = new SseParser((data) => events.push(data));
    parser.push(new TextEncoder().encode('data: 42\n\n'));
    expect(events).toEqual(['42']);
  });
});

describe('long lines (issue 11: a 10 MB line used to cost ~74 s, re-copied on every chunk)', () => {
  it('a 10 MB line in 16 KiB chunks is joined once: bytes copied stay linear in the line', () => {
    const lineBytes = 10 * 1024 * 1024;
    const body = Buffer.from(`data: ${'z'.repeat(lineBytes)}\n\n`);
    const events: string[] = [];
    const parser = new SseParser((data) => events.push(data));
    const concat = vi.spyOn(Buffer, 'concat');
    let copiedBytes = 0;
    concat.mockImplementation(function (this: unknown, list: readonly Uint8Array[], totalLength?: number) {
      const joined = Buffer.from(new Uint8Array(totalLength ?? list.reduce((sum, piece) => sum + piece.length, 0)));
      let offset = 0;
      for (const piece of list) {
        joined.set(piece, offset);
        offset += piece.length;
      }
      copiedBytes += joined.length;
      return joined;
    });
    try {
      for (let start = 0; start < body.length; start += 16_384) expect(parser.push(body.subarray(start, start + 16_384))).toBe(true);
    } finally {
      concat.mockRestore();
    }
    expect(events).toHaveLength(1);
    expect(events[0]?.length).toBe(lineBytes);
    // One join of the whole line (the quadratic parser copied ~3,200 MB here).
    expect(copiedBytes).toBeLessThanOrEqual(body.length);
  });

  it('an event past maxEventBytes stops the parser: push returns false and nothing more is held', () => {
    const events: string[] = [];
    const parser = new SseParser((data) => events.push(data), { maxEventBytes: 1000 });
    expect(parser.push(Buffer.from('data: ok\n\n'))).toBe(true);
    expect(parser.push(Buffer.from(`data: ${'a'.repeat(600)}`))).toBe(true);
    expect(parser.push(Buffer.from('a'.repeat(600)))).toBe(false);
    expect(parser.heldBytes).toBe(0);
    expect(parser.push(Buffer.from('\n\ndata: late\n\n'))).toBe(false);
    expect(events).toEqual(['ok']);
  });

  it('many data lines of one event count together; comments do not count', () => {
    const parser = new SseParser(() => undefined, { maxEventBytes: 100 });
    for (let index = 0; index < 50; index++) expect(parser.push(Buffer.from(': keep-alive ping\n'))).toBe(true);
    expect(parser.push(Buffer.from(`data: ${'b'.repeat(40)}\ndata: ${'b'.repeat(40)}\n`))).toBe(true);
    expect(parser.push(Buffer.from(`data: ${'b'.repeat(40)}\n`))).toBe(false);
  });
});
