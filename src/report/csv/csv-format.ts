import { decimalOfUnits } from '../../utils/decimal-text.js';
import type { TextBytesWriter } from '../../utils/text-bytes-writer.js';

/**
 * RFC 4180 field: quoted when it holds a comma, a quote, a line break, or leading/trailing spaces; quotes doubled.
 * An absent value is an empty field, which pandas reads as NaN and spreadsheets as a blank cell.
 */
export function csvField(value: string | number | boolean | undefined | null): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === '') return '';
  const text = neutralizeFormula(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A cell a spreadsheet would run as a formula starts with one of these (OWASP's CSV injection list). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** ...but a plain number, negative or signed, is data and stays as it is. */
const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Text that a spreadsheet would evaluate (`=HYPERLINK(...)`, `@SUM(...)`, `-2+3`, a leading tab or CR) gets a leading
 * apostrophe, which spreadsheets show as text and never evaluate. Server-sent text (error messages, finish reasons,
 * host names) reaches these files, so a hostile server must not be able to plant a formula in them. Plain numbers
 * such as `-1.5` are left alone.
 */
export function neutralizeFormula(text: string): string {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}

/** One CSV line (RFC 4180 uses CRLF; we end lines with LF, which every reader accepts and diffs keep readable). */
export function csvLine(fields: readonly string[]): string {
  return `${fields.join(',')}\n`;
}

/**
 * Seconds with microsecond precision, without trailing zeros; empty when absent or not finite. Integer arithmetic on
 * whole microseconds rather than toFixed and a regular expression: this runs forty times per row of requests.csv.
 */
export function formatSeconds(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '';
  return decimalOfUnits(Math.round(value * 1e6), 1e6, 6);
}

/** `formatSeconds` written as bytes; false (and nothing written) when the value is absent or not finite. */
export function writeSeconds(out: TextBytesWriter, value: number | undefined): boolean {
  if (value === undefined || !Number.isFinite(value)) return false;
  out.fixedPoint(Math.round(value * 1e6), 6);
  return true;
}

/**
 * Parses CSV text (RFC 4180: quoted fields with doubled quotes and embedded line breaks) into rows of strings. Used to
 * read our own files back (`servelab report DIR`) and in tests.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let inQuotes = false;
  let index = 0;
  while (index < text.length) {
    const character = text[index] as string;
    if (inQuotes) {
      if (character === '"') {
        if (text[index + 1] === '"') {
          field += '"';
          index += 2;
          continue;
        }
        inQuotes = false;
      } else {
        field += character;
      }
      index++;
      continue;
    }
    if (character === '"') {
      inQuotes = true;
    } else if (character === ',') {
      row.push(field);
      field = '';
    } else if (character === '\n' || character === '\r') {
      if (character === '\r' && text[index + 1] === '\n') index++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else {
      field += character;
    }
    index++;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
