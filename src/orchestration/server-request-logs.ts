import { copyFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SglangMetaInfo } from '../clients/sglang-native/sglang-meta-info.js';
import type { ServerHandle } from '../types/cluster.js';
import type { RequestRecord } from '../types/record.js';
import { bootstrapRoomOfLine, fillPdPhases } from './pd-request-log-phases.js';

/**
 * SGLang's request log: with `--export-metrics-to-file --export-metrics-to-file-dir DIR` every finished request is one
 * JSON line in `DIR/sglang-request-metrics-{YYYYmmdd_HH}.log` (`observability/request_metrics_exporter.py`): its
 * parameters as a JSON string under `request_parameters` (the `GenerateReqInput` fields, `rid` among them) and its
 * final `meta_info` keys beside it (`id` is the rid). Health checks are not written.
 */
export const REQUEST_LOG_FILE_PATTERN = /^sglang-request-metrics-.*\.log$/;

/** Where one server's request-log files are. */
export interface RequestLogSource {
  /** A name for the run directory's copy, e.g. `sglang` or `node-0`. */
  name: string;
  directory: string;
  /** Copy the files into the run directory (an attached server's directory is outside it). */
  copy: boolean;
  /**
   * Prefill/decode disaggregation: the server's role. Both servers of a PD request write a line with its rid; the
   * decode server's (which answered) fills the record's server columns, the prefill server's only its PD phases.
   */
  role?: 'prefill' | 'decode';
}

/** What the join found; written to summary.json under `extras.serverRequestLogs`. */
export interface RequestLogJoin {
  files: string[];
  lines: number;
  /** Records (warmup included) that a line was joined to. */
  joinedRecords: number;
  /** Lines whose request id no record of this run has (another client's requests, or a record that was lost). */
  unjoinedLines: number;
  /** Lines that are not a JSON object with a request id. */
  malformedLines: number;
  /** Measured records no line was joined to (the server never finished them, or it wrote no line). */
  recordsWithoutLine: number;
  /** Directories that were named but could not be read. */
  missingDirectories: string[];
  /** PD: lines whose rid matches a record but whose bootstrap_room is not the one the router gave it (not joined). */
  roomMismatchLines?: number;
  /** PD: measured records that got a line from both their prefill and their decode server. */
  pdJoinedRecords?: number;
}

type JsonObject = Record<string, unknown>;

/**
 * Joins SGLang's request-log lines to the run's records by request id (servelab sends its id as `rid` on every
 * protocol), filling the server timing and token fields a record does not have yet: on OpenAI-compatible protocols and
 * non-streamed requests the answer carries no timing keys at all, and `cached_tokens` is always in the log even where
 * the OpenAI usage leaves it out. What the stream itself said is kept. Nothing here throws for a bad file or line:
 * they are counted.
 */
export async function joinServerRequestLogs(
  sources: readonly RequestLogSource[],
  records: readonly RequestRecord[],
  warmupRecords: readonly RequestRecord[],
  runLogsPath: string,
): Promise<RequestLogJoin> {
  const result: RequestLogJoin = { files: [], lines: 0, joinedRecords: 0, unjoinedLines: 0, malformedLines: 0, recordsWithoutLine: 0, missingDirectories: [] };
  const byId = new Map<string, RequestRecord>();
  for (const record of warmupRecords) byId.set(record.requestId, record);
  for (const record of records) byId.set(record.requestId, record);
  const joined = new Set<string>();
  const pdHalves = new Map<RequestRecord, { prefill?: JsonObject; decode?: JsonObject }>();

  for (const source of sources) {
    const files = await requestLogFiles(source.directory);
    if (files === undefined) {
      result.missingDirectories.push(source.directory);
      continue;
    }
    for (const file of files) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch {
        result.missingDirectories.push(file);
        continue;
      }
      if (source.copy) {
        const copyDirectory = join(runLogsPath, 'server-request-logs', source.name);
        await mkdir(copyDirectory, { recursive: true });
        await copyFile(file, join(copyDirectory, file.slice(file.lastIndexOf('/') + 1))).catch(() => undefined);
        result.files.push(join(copyDirectory, file.slice(file.lastIndexOf('/') + 1)));
      } else {
        result.files.push(file);
      }
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        result.lines++;
        const parsed = parseLine(line);
        if (parsed === undefined) {
          result.malformedLines++;
          continue;
        }
        const record = byId.get(parsed.requestId);
        if (record === undefined) {
          result.unjoinedLines++;
          continue;
        }
        if (source.role !== undefined) {
          // PD: the key is the rid and the room together; a room the router did not give this request is not its line.
          const room = bootstrapRoomOfLine(parsed.line);
          if (room !== undefined && record.bootstrapRoom !== undefined && room !== record.bootstrapRoom) {
            result.roomMismatchLines = (result.roomMismatchLines ?? 0) + 1;
            continue;
          }
          if (room !== undefined) record.bootstrapRoom ??= room;
          const halves = pdHalves.get(record) ?? {};
          halves[source.role] = parsed.line;
          pdHalves.set(record, halves);
          if (source.role === 'prefill') continue;
        }
        fillFromLine(record, parsed.line, parsed.streamed);
        joined.add(record.requestId);
      }
    }
  }
  for (const [record, halves] of pdHalves) fillPdPhases(record, halves.prefill, halves.decode);
  if (sources.some((source) => source.role !== undefined)) {
    result.pdJoinedRecords = records.filter((record) => pdHalves.get(record)?.prefill !== undefined && pdHalves.get(record)?.decode !== undefined).length;
  }
  result.joinedRecords = joined.size;
  for (const record of records) if (!joined.has(record.requestId)) result.recordsWithoutLine++;
  return result;
}

/** One line of the notice a run prints when the join left something out; undefined when nothing was left out. */
export function requestLogNotice(join: RequestLogJoin): string | undefined {
  const parts: string[] = [];
  if (join.missingDirectories.length > 0) parts.push(`could not read ${join.missingDirectories.join(', ')}`);
  if (join.unjoinedLines > 0) parts.push(`${join.unjoinedLines} of ${join.lines} lines match no request of this run (another client's requests?)`);
  if (join.malformedLines > 0) parts.push(`${join.malformedLines} lines are not request-log JSON`);
  if (join.recordsWithoutLine > 0) parts.push(`${join.recordsWithoutLine} requests have no line (not finished by the server, or not written)`);
  if ((join.roomMismatchLines ?? 0) > 0) parts.push(`${join.roomMismatchLines} lines carry a request's id but not the bootstrap_room the router gave it (not joined)`);
  if (parts.length === 0) return undefined;
  return `server request logs: ${parts.join('; ')}; their server columns come from the stream alone`;
}

/** The request-log files in `directory` and in its direct subdirectories (one per server), or undefined if unreadable. */
async function requestLogFiles(directory: string): Promise<string[] | undefined> {
  let entries: string[];
  try {
    entries = (await readdir(directory)).sort();
  } catch {
    return undefined;
  }
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(directory, entry);
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() === true && REQUEST_LOG_FILE_PATTERN.test(entry)) files.push(path);
    else if (info?.isDirectory() === true) {
      const nested = await readdir(path).catch(() => [] as string[]);
      for (const name of nested.sort()) if (REQUEST_LOG_FILE_PATTERN.test(name)) files.push(join(path, name));
    }
  }
  return files;
}

/** A line's request id (`id`, else `request_parameters.rid`) and whether the request was streamed. */
function parseLine(text: string): { requestId: string; streamed: boolean; line: JsonObject } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const line = value as JsonObject;
  let parameters: JsonObject = {};
  if (typeof line['request_parameters'] === 'string') {
    try {
      const parsed: unknown = JSON.parse(line['request_parameters']);
      if (typeof parsed === 'object' && parsed !== null) parameters = parsed as JsonObject;
    } catch {
      // The parameters are only needed for the rid fallback and the stream flag.
    }
  }
  const requestId = typeof line['id'] === 'string' ? line['id'] : typeof parameters['rid'] === 'string' ? parameters['rid'] : undefined;
  if (requestId === undefined) return undefined;
  return { requestId, streamed: parameters['stream'] === true, line };
}

function fillFromLine(record: RequestRecord, line: JsonObject, streamed: boolean): void {
  const meta = new SglangMetaInfo();
  meta.readFinal(line);
  meta.fill(record, streamed, true);
  if (record.actualOutputTokens === undefined && meta.completionTokens !== undefined) record.actualOutputTokens = meta.completionTokens;
  if (meta.completionTokens !== undefined) record.outputTokensFromTrace = meta.completionTokens;
}

/** How long to wait for an attached server's last lines (SGLang writes a line in a task after it answered). */
const ATTACHED_SETTLE_MAX_MS = 2_000;
const ATTACHED_SETTLE_STEP_MS = 250;

/**
 * The request logs of a run's servers, joined to its records: the directory of each SGLang server servelab launched
 * (already in the run's logs; read after the server stopped, so its last lines are written), and the directory given
 * for attached servers (copied into the run; read once its files stop growing, at most 2 s). Returns nothing when there
 * is no request log to read (the simulated engine), so no empty counts are reported.
 */
export async function joinRunRequestLogs(options: {
  servers: readonly ServerHandle[];
  attachedDirectory: string | undefined;
  records: readonly RequestRecord[];
  warmupRecords: readonly RequestRecord[];
  runLogsPath: string;
  /** PD: the first this many servers are prefill servers, the rest decode servers. */
  pdNumPrefill?: number;
}): Promise<{ join: RequestLogJoin; notice?: string } | undefined> {
  const sources: RequestLogSource[] = [];
  options.servers.forEach((server, index) => {
    if (server.requestLogDirectory === undefined) return;
    const role = options.pdNumPrefill === undefined ? undefined : index < options.pdNumPrefill ? ('prefill' as const) : ('decode' as const);
    sources.push({ name: server.name, directory: server.requestLogDirectory, copy: false, ...(role === undefined ? {} : { role }) });
  });
  if (options.attachedDirectory !== undefined) {
    sources.push({ name: 'attached', directory: options.attachedDirectory, copy: true });
    await waitUntilQuiet(options.attachedDirectory);
  }
  if (sources.length === 0) return undefined;
  const joined = await joinServerRequestLogs(sources, options.records, options.warmupRecords, options.runLogsPath);
  const notice = requestLogNotice(joined);
  return notice === undefined ? { join: joined } : { join: joined, notice };
}

/** Waits until the request-log files under `directory` keep their total size for one step (at most 2 s). */
async function waitUntilQuiet(directory: string): Promise<void> {
  const totalSize = async (): Promise<number> => {
    const files = (await requestLogFiles(directory)) ?? [];
    let size = 0;
    for (const file of files) size += (await stat(file).catch(() => undefined))?.size ?? 0;
    return size;
  };
  let previous = await totalSize();
  for (let waited = 0; waited < ATTACHED_SETTLE_MAX_MS; waited += ATTACHED_SETTLE_STEP_MS) {
    await new Promise((resolve) => setTimeout(resolve, ATTACHED_SETTLE_STEP_MS));
    const current = await totalSize();
    if (current === previous) return;
    previous = current;
  }
}
