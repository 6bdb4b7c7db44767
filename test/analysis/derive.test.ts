import { describe, expect, it } from 'vitest';
import { DERIVED_COLUMN_NAMES, deriveColumnArrays, deriveColumns } from '../../src/analysis/derive.js';
import { fullyTracedRecord, recordAt } from './records.js';

// Epoch seconds near 1.7e9 carry about 2.4e-7 s of rounding, so "exact" here means to the microsecond.
const MICROSECOND_DIGITS = 6;

describe('deriveColumns', () => {
  it('computes every documented derived column from a fully traced record', () => {
    const derived = deriveColumns(fullyTracedRecord());
    const expected = {
      total_latency: 0.249,
      server_latency: 0.247,
      ttft: 0.049,
      server_ttft: 0.042,
      queue_time_in_router: 0.002,
      network_time: 0.001,
      tokenize_time: 0.002,
      pure_queue_time: 0.01,
      queue_time_in_server: 0.042,
      prefill_time: 0.03,
      decode_time: 0.2,
      tpot: 0.02,
      send_lag: 0.001,
      intended_latency: 0.25,
    };
    expect(Object.keys(derived).sort()).toEqual([...DERIVED_COLUMN_NAMES].sort());
    for (const [name, value] of Object.entries(expected)) {
      expect(derived[name as keyof typeof derived], name).toBeCloseTo(value, MICROSECOND_DIGITS);
    }
  });

  it('leaves a column undefined when one of its inputs is missing, never guessing', () => {
    // A node test through an attach target without --enable-metrics: no server timing keys at all.
    const derived = deriveColumns(recordAt({ scheduledTime: 1, arrivalTime: 1.5, routerSendTime: 1.5, firstTokenTime: 2, finishTime: 3, actualOutputTokens: 5 }));
    expect(derived.total_latency).toBeCloseTo(1.5, MICROSECOND_DIGITS);
    expect(derived.queue_time_in_router).toBe(0);
    expect(derived.tpot).toBeCloseTo(0.25, MICROSECOND_DIGITS);
    for (const name of ['server_ttft', 'network_time', 'tokenize_time', 'pure_queue_time', 'queue_time_in_server', 'prefill_time'] as const) {
      expect(derived[name], name).toBeUndefined();
      expect(name in derived).toBe(false);
    }
  });

  it('excludes the first token from TPOT and leaves it undefined for one output token or an unknown count', () => {
    expect(deriveColumns(fullyTracedRecord(0, { actualOutputTokens: 1 })).tpot).toBeUndefined();
    expect(deriveColumns(fullyTracedRecord(0, { actualOutputTokens: undefined })).tpot).toBeUndefined();
    expect(deriveColumns(fullyTracedRecord(0, { actualOutputTokens: 3 })).tpot).toBeCloseTo(0.1, MICROSECOND_DIGITS);
  });

  it('gives the same values as columns of NaN-marked arrays', () => {
    const records = [fullyTracedRecord(0), recordAt({ scheduledTime: 0, arrivalTime: 0.5 })];
    const arrays = deriveColumnArrays(records);
    expect(arrays.ttft[0]).toBeCloseTo(0.049, MICROSECOND_DIGITS);
    expect(Number.isNaN(arrays.ttft[1])).toBe(true);
    expect(arrays.send_lag[1]).toBeCloseTo(0.5, MICROSECOND_DIGITS);
  });
});

describe('a prefill/decode request', () => {
  // As a simulated or SGLang decode server stamps it: received at 0.004, its waiting queue entered when the KV arrived
  // (0.040: the prefill half and the transfer), the prebuilt step at once (forward entry = first token, no prefill).
  const pd = fullyTracedRecord(0, {
    prefillHost: 'http://127.0.0.1:30001',
    decodeHost: 'http://127.0.0.1:30002',
    host: 'http://127.0.0.1:30002',
    queueTimeStart: 0.04,
    queueTimeEnd: 0.042,
    serverFirstTokenTime: 0.042,
    prefillQueueTime: 0.005,
    prefillForwardTime: 0.025,
    kvTransferTime: 0.004,
    decodeQueueTime: 0.002,
  });

  it('counts no decode wait as tokenize and takes its prefill from the prefill server, in both derivations', () => {
    const derived = deriveColumns(pd);
    expect(derived.tokenize_time).toBeUndefined();
    expect(derived.prefill_time).toBeCloseTo(0.025, MICROSECOND_DIGITS);
    expect(derived.pure_queue_time).toBeCloseTo(0.002, MICROSECOND_DIGITS);
    const arrays = deriveColumnArrays([pd, fullyTracedRecord(0)]);
    expect(Number.isNaN(arrays.tokenize_time[0])).toBe(true);
    expect(arrays.prefill_time[0]).toBeCloseTo(0.025, MICROSECOND_DIGITS);
    // A co-located record beside it keeps its own.
    expect(arrays.tokenize_time[1]).toBeCloseTo(0.002, MICROSECOND_DIGITS);
    expect(arrays.prefill_time[1]).toBeCloseTo(0.03, MICROSECOND_DIGITS);
  });

  it('leaves prefill_time empty where the prefill server gave no phases (never the decode step in its place)', () => {
    const unjoined = { ...pd, prefillForwardTime: undefined };
    expect(deriveColumns(unjoined).prefill_time).toBeUndefined();
    expect(Number.isNaN(deriveColumnArrays([unjoined]).prefill_time[0])).toBe(true);
  });
});

describe('deriveColumnArrays', () => {
  it('agrees with deriveColumns whatever subset of inputs is present', () => {
    const fields = [
      'scheduledTime', 'arrivalTime', 'routerSendTime', 'serverCreatedTime', 'queueTimeStart', 'queueTimeEnd',
      'serverFirstTokenTime', 'firstTokenTime', 'finishTime', 'actualOutputTokens',
    ] as const;
    const records = Array.from({ length: 64 }, (_, variant) => {
      const record = fullyTracedRecord(variant);
      // Drop a different pseudo-random subset of inputs from each record.
      fields.forEach((field, bit) => {
        if (((variant * 2654435761) >>> bit) & 1) delete (record as Partial<typeof record>)[field];
      });
      return record;
    });
    const arrays = deriveColumnArrays(records);
    records.forEach((record, index) => {
      const derived = deriveColumns(record);
      for (const name of DERIVED_COLUMN_NAMES) {
        const fromArray = arrays[name][index] as number;
        if (derived[name] === undefined) expect(Number.isNaN(fromArray), `${name} of record ${index}`).toBe(true);
        else expect(fromArray, `${name} of record ${index}`).toBe(derived[name]);
      }
    });
  });
});
