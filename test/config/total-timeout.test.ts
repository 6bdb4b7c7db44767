import { describe, expect, it } from 'vitest';
import { resolveNodeTestConfig } from '../../src/config/node-test-config.js';

describe('the total deadline setting (issue 29)', () => {
  it("defaults to 'by-size' (each request's own lengths), not six hours; a number still gives every request that", () => {
    expect(resolveNodeTestConfig({}).totalTimeoutMs).toBe('by-size');
    expect(resolveNodeTestConfig({ totalTimeoutMs: 30_000 }).totalTimeoutMs).toBe(30_000);
    // A run's config.json holds the resolved value, and must read back.
    expect(resolveNodeTestConfig({ totalTimeoutMs: 'by-size' }).totalTimeoutMs).toBe('by-size');
    expect(() => resolveNodeTestConfig({ totalTimeoutMs: 'forever' })).toThrow(/totalTimeoutMs .*must be a number of milliseconds above 0, or "by-size"/);
  });
});
