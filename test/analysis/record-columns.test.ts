import { describe, expect, it } from 'vitest';
import { DERIVED_COLUMN_NAMES } from '../../src/analysis/derive.js';
import { NON_COLUMN_FIELDS, REQUEST_COLUMNS, REQUESTS_CSV_COLUMNS, STORED_COLUMNS } from '../../src/analysis/record-columns.js';
import { SERVER_CLOCK_FIELDS } from '../../src/analysis/clock-offset/correct-run-clocks.js';

describe('the record column table', () => {
  it('names each column once and stores each field once', () => {
    expect(new Set(REQUESTS_CSV_COLUMNS).size).toBe(REQUESTS_CSV_COLUMNS.length);
    const storedFields = STORED_COLUMNS.map((column) => column.field);
    expect(new Set(storedFields).size).toBe(storedFields.length);
    for (const field of NON_COLUMN_FIELDS) expect(storedFields).not.toContain(field);
  });

  it('holds every derived duration, in derive.ts order, and aliases only stored fields', () => {
    expect(REQUEST_COLUMNS.filter((column) => column.source === 'derived').map((column) => column.column)).toEqual([...DERIVED_COLUMN_NAMES]);
    const storedFields = new Set(STORED_COLUMNS.map((column) => column.field));
    for (const column of REQUEST_COLUMNS) if (column.source === 'alias') expect(storedFields.has(column.field), column.column).toBe(true);
  });

  it('marks as server-stamped exactly the instants that clock correction shifts', () => {
    const serverInstants = STORED_COLUMNS.filter((column) => column.kind === 'time' && column.origin === 'server').map((column) => column.field);
    expect(serverInstants.sort()).toEqual([...SERVER_CLOCK_FIELDS].sort());
  });
});
