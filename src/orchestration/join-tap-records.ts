import type { RequestRecord } from '../types/record.js';
import type { TapRecord } from '../types/routing.js';

/**
 * Gives each record the instant its router forwarded it and the server that took it, from the taps' records, matched
 * by request id. A request the router retried reaches more than one tap: the last forward is the one that served it,
 * and the count of earlier ones is its retries (unless the router itself reported retries).
 */
export function joinTapRecords(records: RequestRecord[], tapRecords: TapRecord[]): { matched: number } {
  const byRequestId = new Map<string, TapRecord[]>();
  for (const tapRecord of tapRecords) {
    if (tapRecord.requestId === '') continue;
    const list = byRequestId.get(tapRecord.requestId);
    if (list === undefined) byRequestId.set(tapRecord.requestId, [tapRecord]);
    else list.push(tapRecord);
  }
  let matched = 0;
  for (const record of records) {
    const forwards = byRequestId.get(record.requestId);
    if (forwards === undefined) continue;
    forwards.sort((first, second) => first.routerSendTime - second.routerSendTime);
    const served = forwards[forwards.length - 1] as TapRecord;
    record.routerSendTime = served.routerSendTime;
    record.host = served.host;
    // A PD request: the router's record names both servers (`host` is the decode server, which answered) and the room.
    if (served.prefillHost !== undefined) record.prefillHost = served.prefillHost;
    if (served.decodeHost !== undefined) record.decodeHost = served.decodeHost;
    if (served.bootstrapRoom !== undefined) record.bootstrapRoom = served.bootstrapRoom;
    if (forwards.length > 1) record.retries ??= forwards.length - 1;
    matched++;
  }
  return { matched };
}
