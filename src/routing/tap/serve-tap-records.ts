import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TapOverhead, TapRecord } from '../../types/routing.js';
import type { TapRecordsResponse } from './start-taps.js';

/**
 * The tap-records endpoint, one answer for the tracing taps and for the builtin router's own trace, so a run collects
 * and joins both the same way. GET: the records from `?offset=` on, how many there are, and the tracer's own cost where
 * it has one; DELETE: `clear` them (after a warmup, say).
 */
export function serveTapRecords(
  incoming: IncomingMessage,
  response: ServerResponse,
  records: readonly TapRecord[],
  clear: () => void,
  overhead?: () => TapOverhead,
): void {
  if (incoming.method === 'DELETE') {
    clear();
    response.writeHead(204).end();
    return;
  }
  const query = new URL(incoming.url ?? '/', 'http://tap').searchParams;
  const offset = Math.max(0, Number(query.get('offset') ?? 0) || 0);
  const body: TapRecordsResponse = { records: records.slice(offset), total: records.length };
  if (overhead !== undefined) body.overhead = overhead();
  const text = JSON.stringify(body);
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
