import { describe, expect, it } from 'vitest';
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
