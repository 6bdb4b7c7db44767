import type { EngineProfile, EngineRequestView } from '../../types/engine.js';
import { resolveEngineSetup } from '../create-engine.js';
import { VirtualTimeSimulator } from '../virtual/virtual-time-simulator.js';
import type { RecordedRun, RunRequest } from './run-records.js';

/** The limits and scheduling a replay runs the simulated engine with (the real server's, as far as they are known). */
export interface ReplaySettings {
  maxRunningRequests?: number;
  chunkedPrefillSize?: number;
  maxTotalTokens?: number;
  /** Absent: the profile's (its scheduling's), else 1. */
  pageSize?: number;
  enableMixedChunk: boolean;
}

/** What the simulated engine made of one recorded request; times in ms on the run's own time line. */
export interface ReplayedRequest {
  forwardMs: number;
  firstTokenMs: number;
  finishedMs: number;
}

/**
 * Replays a recorded run through the simulated engine in virtual time: every request enters the engine's queue when it
 * entered the real server's (`queue_time_start`), with its prompt less what the real server found cached (the replay
 * has no prefix cache: random prompts share nothing, and a cache hit is read from the record instead) and the
 * number of tokens the real server generated. The simulated engine's forward entry, first token and finish stand
 * beside the real ones, request by request; a request the engine refused comes back NaN.
 */
export function replayRun(run: RecordedRun, profile: EngineProfile, settings: ReplaySettings): ReplayedRequest[] {
  const longest = run.requests.reduce((most, request) => Math.max(most, request.promptTokens + request.outputTokens), 0);
  const setup = resolveEngineSetup({
    profile,
    ...(settings.maxRunningRequests === undefined ? {} : { maxRunningRequests: settings.maxRunningRequests }),
    ...(settings.chunkedPrefillSize === undefined ? {} : { chunkedPrefillSize: settings.chunkedPrefillSize }),
    ...(settings.maxTotalTokens === undefined ? {} : { maxTotalTokens: settings.maxTotalTokens }),
    ...(settings.pageSize === undefined ? {} : { pageSize: settings.pageSize }),
    // The context length only decides refusals, which the records (successful requests) never had.
    contextLength: longest + 16,
    disableRadixCache: true,
    enableMixedChunk: settings.enableMixedChunk,
  });
  const replayed: ReplayedRequest[] = run.requests.map(() => ({ forwardMs: Number.NaN, firstTokenMs: Number.NaN, finishedMs: Number.NaN }));
  // Virtual time starts at 0; the run's time line may start before its t0 (warm-up), so the replay is shifted by its first arrival.
  const originMs = run.requests[0]?.queuedMs ?? 0;
  const simulator = new VirtualTimeSimulator([setup], {
    onFinish: (_engine: number, view: EngineRequestView, timeMs: number) => {
      const outcome = replayed[view.driverData as number] as ReplayedRequest;
      if (view.finishReason?.type === 'abort') return;
      outcome.forwardMs = view.forwardEntryMs + originMs;
      outcome.firstTokenMs = view.prefillFinishedMs + originMs;
      outcome.finishedMs = timeMs + originMs;
    },
  });
  run.requests.forEach((request: RunRequest, index) => {
    simulator.submit(
      0,
      { id: String(index), promptTokenIds: promptOf(Math.max(1, request.promptTokens - request.cachedTokens)), maxNewTokens: request.outputTokens, driverData: index },
      request.queuedMs - originMs,
    );
  });
  simulator.runUntilIdle();
  return replayed;
}

/** Prompt ids are never read with the cache off; one shared zero array serves every length. */
let zeros = new Uint32Array(0);
function promptOf(length: number): Uint32Array {
  if (zeros.length < length) zeros = new Uint32Array(Math.max(length, zeros.length * 2));
  return zeros.subarray(0, length);
}
