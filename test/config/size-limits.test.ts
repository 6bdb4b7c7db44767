import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import { resolveNodeTestConfig } from '../../src/config/node-test-config.js';
import { MAX_RESPONSE_CAP_BYTES } from '../../src/config/size-limits.js';

describe("size settings stay below V8's string limit (issue 29)", () => {
  it('--max-body-bytes and --max-sse-event-bytes of 1e9 are refused in one line naming the setting and the limit', () => {
    expect(() => resolveNodeTestConfig({ maxBodyBytes: 1e9 })).toThrow(new RegExp(`maxBodyBytes \\(--max-body-bytes\\): must be at most ${MAX_RESPONSE_CAP_BYTES} bytes`));
    expect(() => resolveNodeTestConfig({ maxSseEventBytes: 1e9 })).toThrow(/maxSseEventBytes \(--max-sse-event-bytes\): must be at most/);
    expect(() => resolveNodeTestConfig({ maxBodyBytes: MAX_RESPONSE_CAP_BYTES, maxSseEventBytes: MAX_RESPONSE_CAP_BYTES })).not.toThrow();
  });

  it('the limit is below the longest string this Node can make', async () => {
    const { constants } = await import('node:buffer');
    expect(MAX_RESPONSE_CAP_BYTES).toBeLessThan(constants.MAX_STRING_LENGTH);
  });

  it('a library user giving the client limits above it is refused when the client is made', () => {
    const make = (limits: Record<string, number>): unknown =>
      createProtocolClient('sglang', { baseUrl: 'http://127.0.0.1:9', stream: true, sampling: { temperature: 0, ignoreEos: true }, clock: systemClock, limits });
    expect(() => make({ maxSseEventBytes: 1e9 })).toThrow(/maxSseEventBytes is 1000000000; give a whole number of bytes from 1 to/);
    expect(() => make({ maxBodyBytes: 0 })).toThrow(/maxBodyBytes is 0/);
  });
});
