import { expect } from 'vitest';
import type { RequestRow } from './requests-csv.js';

/**
 * What every request of a prefill/decode run must show, whatever the router or the clock: it succeeded, a prefill
 * server and a different decode server took it, the decode server answered it (its `host`), and it had a bootstrap
 * room of its own (a room shared by two requests would pair one's KV with the other's decode).
 */
export function expectPdPairs(rows: readonly RequestRow[]): void {
  const rooms = new Set<string | undefined>();
  for (const row of rows) {
    expect(row['success']).toBe('true');
    expect(row['prefill_host']).toBeTruthy();
    expect(row['prefill_host']).not.toBe(row['decode_host']);
    expect(row['host']).toBe(row['decode_host']);
    expect(row['bootstrap_room']).toMatch(/^\d+$/);
    rooms.add(row['bootstrap_room']);
  }
  expect(rooms.size).toBe(rows.length);
}
