import { request } from 'undici';
import { ServelabError } from '../../errors/servelab-error.js';
import type { TapOverhead, TapRecord } from '../../types/routing.js';
import { controlTokenHeaders } from '../router/control-auth.js';
import { TAP_RECORDS_PATH, type TapRecordsResponse } from './start-taps.js';

/**
 * Fetches the records held by a taps process (`servelab taps`), from its first tap URL. `offset` skips records
 * already fetched, so a long run can be collected in pieces. The endpoint needs the run's control token (default: this
 * process's, which the taps servelab launched inherited).
 */
export async function fetchTapRecords(firstTapUrl: string, offset = 0, controlToken?: string): Promise<TapRecordsResponse> {
  const url = `${firstTapUrl.replace(/\/+$/, '')}${TAP_RECORDS_PATH}?offset=${offset}`;
  try {
    const answer = await request(url, { method: 'GET', headers: controlTokenHeaders(controlToken) });
    if (answer.statusCode !== 200) {
      await answer.body.dump();
      throw new Error(`it answered HTTP ${answer.statusCode}`);
    }
    return (await answer.body.json()) as TapRecordsResponse;
  } catch (error) {
    throw new ServelabError('UNREACHABLE', `could not fetch tap records from ${url}: ${(error as Error).message}; is the taps process still running?`, {
      cause: error,
    });
  }
}

/** Forgets the records held so far (e.g. those of warmup requests). */
export async function clearTapRecords(firstTapUrl: string, controlToken?: string): Promise<void> {
  const url = `${firstTapUrl.replace(/\/+$/, '')}${TAP_RECORDS_PATH}`;
  try {
    const answer = await request(url, { method: 'DELETE', headers: controlTokenHeaders(controlToken) });
    await answer.body.dump();
    if (answer.statusCode !== 204) throw new Error(`it answered HTTP ${answer.statusCode}`);
  } catch (error) {
    throw new ServelabError('UNREACHABLE', `could not clear tap records at ${url}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Every record a taps process (or a builtin router started with `--trace`) holds, fetched page after page from its
 * URL, so that a million-request run never needs one giant answer; with the taps' overhead where they report one.
 */
export async function fetchAllTapRecords(url: string, controlToken?: string): Promise<{ records: TapRecord[]; overhead?: TapOverhead }> {
  const records: TapRecord[] = [];
  let overhead: TapOverhead | undefined;
  for (;;) {
    const page = await fetchTapRecords(url, records.length, controlToken);
    overhead = page.overhead;
    for (const record of page.records) records.push(record);
    if (page.records.length === 0 || records.length >= page.total) break;
  }
  return overhead === undefined ? { records } : { records, overhead };
}
