import { describe, expect, it } from 'vitest';
import { deriveColumns } from '../../src/analysis/derive.js';
import { REQUESTS_CSV_COLUMNS, requestsCsvRow } from '../../src/report/csv/csv-reporter.js';
import { formatSeconds, parseCsv } from '../../src/report/csv/csv-format.js';
import { recordToJsonLine, recordToJsonObject } from '../../src/report/jsonl/jsonl-reporter.js';
import { STORED_COLUMNS } from '../../src/analysis/record-columns.js';
import type { RequestRecord } from '../../src/types/record.js';
import type { DerivedColumnName } from '../../src/types/summary.js';
import { T0, fullyTracedRecord } from '../analysis/records.js';

/** A record with every field set to a distinctive value, so a column written in the wrong place shows. */
function everyFieldRecord() {
  return fullyTracedRecord(1, {
    prefixGroup: 7,
    sessionId: 'session-3',
    numRetractions: 2,
    retries: 1,
    finishReason: 'length',
    httpStatus: 200,
    errorMessage: 'none, really',
    inputLength: 123,
    expectedOutputLength: 45,
    actualPromptTokens: 124,
    actualOutputTokens: 46,
    cachedTokens: 64,
    outputTokensFromTrace: 47,
  });
}

describe('row writers', () => {
  it('put every requests.csv cell under its own header', () => {
    const record = everyFieldRecord();
    const [cells] = parseCsv(requestsCsvRow(record, T0));
    expect(cells).toHaveLength(REQUESTS_CSV_COLUMNS.length);
    const row = Object.fromEntries(REQUESTS_CSV_COLUMNS.map((name, index) => [name, cells?.[index]]));
    const json = recordToJsonObject(record, T0);
    for (const [name, value] of Object.entries(json)) {
      if (name === 'inter_token_latencies') continue;
      expect(row[name], name).toBe(typeof value === 'number' && name.endsWith('_time') ? formatSeconds(value) : String(value));
    }
    for (const [name, value] of Object.entries(deriveColumns(record))) expect(row[name as DerivedColumnName], name).toBe(formatSeconds(value));
    expect(row.decode_length).toBe('46');
    // The first users' columns: their request id, whether text came back, prompt + output tokens, the trace's count.
    expect(row.req_id).toBe(record.requestId);
    expect(row.has_generated_text).toBe('true');
    expect(row.actual_total_tokens).toBe('170');
    expect(row.output_tokens_from_trace).toBe('47');
    const [empty] = parseCsv(requestsCsvRow(fullyTracedRecord(2, { success: false, actualOutputTokens: undefined, actualPromptTokens: 10, firstTokenTime: undefined }), T0));
    const emptyRow = Object.fromEntries(REQUESTS_CSV_COLUMNS.map((name, index) => [name, empty?.[index]]));
    expect(emptyRow.has_generated_text).toBe('false');
    expect(emptyRow.actual_total_tokens).toBe('');
    expect(emptyRow.output_tokens_from_trace).toBe('');
  });

  it('write the same JSON line as serializing the record object', () => {
    for (const record of [everyFieldRecord(), fullyTracedRecord(0, { success: false, error: 'timeout', finishTime: undefined, interTokenLatencies: undefined })]) {
      const line = recordToJsonLine(record, T0);
      expect(line.endsWith('\n')).toBe(true);
      expect(JSON.parse(line)).toEqual(recordToJsonObject(record, T0));
      expect(Object.keys(JSON.parse(line) as object)).toEqual(Object.keys(recordToJsonObject(record, T0)));
    }
  });

  it('write every record column into the JSON line, in the order of STORED_COLUMNS', () => {
    // Every stored field set, each to a value of its kind that no other field has.
    const fields: Record<string, unknown> = { warmup: false, interTokenLatencies: [0.001, 0.0025] };
    STORED_COLUMNS.forEach((column, index) => {
      fields[column.field] =
        column.kind === 'time' ? T0 + index / 8 : column.kind === 'string' ? `text ${index} "quoted"` : column.kind === 'boolean' ? index % 2 === 0 : column.kind === 'float' ? index + 0.5 : index;
    });
    const record = fields as unknown as RequestRecord;
    const line = recordToJsonLine(record, T0);
    expect(Object.keys(JSON.parse(line) as object)).toEqual([...STORED_COLUMNS.map((column) => column.column), 'inter_token_latencies']);
    expect(line).toBe(`${JSON.stringify(recordToJsonObject(record, T0))}\n`);
    // Fields left out of the record are left out of the line; a number JSON cannot hold is written as null.
    const sparse = { requestId: 'r-1', success: false, warmup: false, datasetIndex: 3, inputLength: 4, expectedOutputLength: 5, scheduledTime: T0, arrivalTime: Number.NaN } as RequestRecord;
    expect(recordToJsonLine(sparse, T0)).toBe('{"request_id":"r-1","scheduled_time":0,"arrival_time":null,"input_length":4,"expected_output_length":5,"dataset_index":3,"success":false}\n');
  });
});

describe('per-token gaps in the JSON line', () => {
  it('are written to the nanosecond like rounding then printing the double', () => {
    const gaps = [0.004823117, 0.02, 1.5, 0.000000001, 0, -0.25, 12.3456789012, 1e-10];
    const line = recordToJsonLine(fullyTracedRecord(1, { interTokenLatencies: gaps }), T0);
    const written = (JSON.parse(line) as { inter_token_latencies: number[] }).inter_token_latencies;
    expect(written).toEqual(gaps.map((gap) => Math.round(gap * 1e9) / 1e9));
    expect(line).toContain('"inter_token_latencies":[0.004823117,0.02,1.5,0.000000001,0,-0.25,12.345678901,0]');
    // A gap whose nanoseconds overflow is no measurement: null.
    expect(recordToJsonLine(fullyTracedRecord(1, { interTokenLatencies: [Number.NaN, 1e300, 0.5] }), T0)).toContain('"inter_token_latencies":[null,null,0.5]');
  });
});
