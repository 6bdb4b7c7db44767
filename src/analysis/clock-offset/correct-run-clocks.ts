import type { ClockOffsetEstimate, ClockOffsetSample } from '../../types/clock-offset.js';
import type { RequestRecord } from '../../types/record.js';
import type { RunData } from '../../types/run.js';
import { estimateClockOffset, offsetAt, type EstimateOptions, type OffsetFit } from './estimate-clock-offset.js';
import { attributeServerStalls } from '../server-stalls.js';

/**
 * The instants a server stamps on its own clock. Everything else in a record is read on the client's host: the
 * client's own times, and `routerSendTime`, which the tracing taps or the builtin router stamp on the same host.
 */
export const SERVER_CLOCK_FIELDS = [
  'serverCreatedTime',
  'serverDispatchTime',
  'queueTimeStart',
  'queueTimeEnd',
  'serverFirstTokenTime',
  'serverResponseSentTime',
  'serverFinishTime',
] as const satisfies ReadonlyArray<keyof RequestRecord>;

/**
 * What one request bounds (see ClockOffsetSample), or undefined when it lacks the instants:
 * - upper: the server received the request after the last hop on the client's host sent it (router send, else arrival);
 * - lower: the server's first token came before the client received it, and every server instant before the client
 *   received the last byte.
 */
export function clockOffsetSampleOf(record: RequestRecord): ClockOffsetSample | undefined {
  if (!record.success) return undefined;
  const send = record.routerSendTime ?? record.arrivalTime;
  const received = record.serverCreatedTime;
  if (send === undefined || received === undefined) return undefined;
  let lower = -Infinity;
  if (record.serverFirstTokenTime !== undefined && record.firstTokenTime !== undefined) {
    lower = record.serverFirstTokenTime - record.firstTokenTime;
  }
  if (record.finishTime !== undefined) {
    for (const field of SERVER_CLOCK_FIELDS) {
      const instant = record[field];
      if (instant !== undefined && instant - record.finishTime > lower) lower = instant - record.finishTime;
    }
  }
  if (lower === -Infinity) return undefined;
  return { time: send, lower, upper: received - send };
}

export interface ClockCorrectionOptions {
  /**
   * Move server instants onto the client's clock when the requests prove the clocks disagree. Default: the run's
   * `clockCorrection` setting (on unless set to false).
   */
  enabled?: boolean;
  estimate?: EstimateOptions;
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** Whether the bounds exclude a zero offset: only then do the requests prove that the two clocks disagree. */
function isSignificant(fit: OffsetFit): boolean {
  const largest = Math.max(Math.abs(offsetAt(fit, fit.referenceTime)), Math.abs(offsetAt(fit, fit.lastTime)));
  return largest > fit.uncertaintySeconds;
}

function describe(host: string, fit: OffsetFit | null, used: number, rejected: number, enabled: boolean): ClockOffsetEstimate {
  if (fit === null) {
    return {
      host,
      requestsUsed: used,
      requestsRejected: rejected,
      offsetMs: null,
      uncertaintyMs: null,
      driftPpm: null,
      model: null,
      consistent: true,
      corrected: false,
      note: `too few requests with both client and server instants (${used}) to bound the clock offset; server instants are as the server stamped them`,
    };
  }
  const significant = isSignificant(fit);
  const corrected = enabled && significant;
  const offsetMs = fit.offsetSeconds * 1000;
  const uncertaintyMs = fit.uncertaintySeconds * 1000;
  const amount = `${offsetMs >= 0 ? '+' : ''}${offsetMs.toFixed(3)} ± ${uncertaintyMs.toFixed(3)} ms`;
  let note: string;
  if (!significant) note = `clocks agree within ${amount} (bounds include zero): nothing to correct`;
  else if (corrected) note = `server clock is ${amount} off this host's; server instants moved onto this host's clock`;
  else note = `server clock is ${amount} off this host's and clock correction is off: network_time, tokenize_time and the server columns include it`;
  if (!fit.consistent) note += '; the requests do not agree on one offset (a clock step or drift mid-run?), so the estimate comes from the fastest requests alone';
  return {
    host,
    requestsUsed: fit.used,
    requestsRejected: fit.rejected,
    offsetMs: round(offsetMs, 4),
    uncertaintyMs: round(uncertaintyMs, 4),
    driftPpm: fit.model === 'linear' ? round(fit.driftPerSecond * 1e6, 3) : null,
    model: fit.model,
    consistent: fit.consistent,
    corrected,
    note,
  };
}

function shifted(record: RequestRecord, fit: OffsetFit): RequestRecord {
  const offset = offsetAt(fit, record.routerSendTime ?? record.arrivalTime ?? record.scheduledTime);
  const copy: RequestRecord = { ...record };
  for (const field of SERVER_CLOCK_FIELDS) {
    const instant = record[field];
    if (instant !== undefined) copy[field] = instant - offset;
  }
  return copy;
}

/**
 * Estimates each server's clock offset from the run's requests and, where the requests prove the clocks disagree,
 * returns the run with that server's instants moved onto the client's clock. `rawRecords` keeps the records as
 * measured (requests.jsonl writes those), so re-analysing a run directory gives the same correction again.
 * Virtual-time runs have one clock by construction and are returned as they are.
 */
export function correctRunClocks(run: RunData, options: ClockCorrectionOptions = {}): RunData {
  // Every path that turns measured records into analysed ones comes here, so the waits for a hung server (which need
  // the server instants on the client's clock, like the hang events) are attributed here too.
  return attributeServerStalls(correctClocks(run, options));
}

function correctClocks(run: RunData, options: ClockCorrectionOptions): RunData {
  if (run.info.simulated) return run;
  const raw = run.rawRecords ?? run.records;
  const samplesByHost = new Map<string, ClockOffsetSample[]>();
  for (const record of raw) {
    if (record.warmup || record.host === undefined) continue;
    let samples = samplesByHost.get(record.host);
    if (samples === undefined) samplesByHost.set(record.host, (samples = []));
    const sample = clockOffsetSampleOf(record);
    if (sample !== undefined) samples.push(sample);
  }
  const enabled = options.enabled ?? run.config['clockCorrection'] !== false;
  const estimates: ClockOffsetEstimate[] = [];
  const fits = new Map<string, OffsetFit>();
  for (const [host, samples] of [...samplesByHost].sort(([a], [b]) => a.localeCompare(b))) {
    const result = estimateClockOffset(samples, options.estimate);
    const fit = result.model === null ? null : result;
    const estimate = describe(host, fit, result.used, result.rejected, enabled);
    estimates.push(estimate);
    if (estimate.corrected && fit !== null) fits.set(host, fit);
  }
  if (fits.size === 0) return { ...run, records: raw, clockOffsets: estimates };
  const records = raw.map((record) => {
    const fit = record.host === undefined ? undefined : fits.get(record.host);
    return fit === undefined ? record : shifted(record, fit);
  });
  return { ...run, records, rawRecords: raw, clockOffsets: estimates };
}
