import type { RequestRecord } from '../types/record.js';
import type { TapRecord } from '../types/routing.js';

/**
 * A PD request seen by the taps in front of both sides (a router that does not trace itself, smg): the taps of the
 * first `numPrefill` servers are the prefill side. Its decode leg served it (`host`); each side's last forward names
 * that side's server, and retries count on the decode side only, since the two legs of one attempt go out together.
 * False when no decode tap saw it (then it is joined as any other request).
 */
function joinPdForwards(record: RequestRecord, forwards: TapRecord[], numPrefill: number): boolean {
  const decode = forwards.filter((forward) => forward.hostIndex >= numPrefill);
  const prefill = forwards.filter((forward) => forward.hostIndex < numPrefill);
  const served = decode[decode.length - 1];
  if (served === undefined) return false;
  record.routerSendTime = served.routerSendTime;
  record.host = served.host;
  record.decodeHost = served.host;
  const prefillLeg = prefill[prefill.length - 1];
  if (prefillLeg !== undefined) record.prefillHost = prefillLeg.host;
  const room = served.bootstrapRoom ?? prefillLeg?.bootstrapRoom;
  if (room !== undefined) record.bootstrapRoom = room;
  if (decode.length > 1) record.retries ??= decode.length - 1;
  return true;
}

/**
 * Gives each record the instant its router forwarded it and the server that took it, from the taps' records, matched
 * by request id. A request the router retried reaches more than one tap: the last forward is the one that served it,
 * and the count of earlier ones is its retries (unless the router itself reported retries).
 */
export function joinTapRecords(records: RequestRecord[], tapRecords: TapRecord[], pd?: { numPrefill: number }): { matched: number } {
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
    if (pd !== undefined && joinPdForwards(record, forwards, pd.numPrefill)) {
      matched++;
      continue;
    }
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
