import type { Milliseconds } from '../../types/time.js';
import type { EngineRequest } from './engine-request.js';
import type { KvPool } from './kv-pool.js';

/**
 * SGLang's retract_decode (python/sglang/srt/managers/schedule_batch.py): when the running batch cannot all get one
 * more KV slot (page, above page size 1), requests go back to the waiting queue, least decoded first and, among equals, longest prompt first,
 * until the rest fit one more decode step. With two or more running at least one goes, and the last one never does. A
 * retracted request keeps its output tokens and frees its KV without caching it; it is prefilled again later.
 *
 * Returns the retracted requests, in the order they were taken; the caller moves them from its running list to its
 * queue and counts them.
 */
export function retractDecode(running: readonly EngineRequest[], kv: KvPool, nowMs: Milliseconds): EngineRequest[] {
  const candidates = running
    .slice()
    .sort((left, right) => right.outputTokens - left.outputTokens || left.promptLength - right.promptLength);
  const retracted: EngineRequest[] = [];
  while (candidates.length > 1 && (retracted.length === 0 || kv.availableTokens < kv.decodeSlotsNeeded(candidates))) {
    const victim = candidates.pop() as EngineRequest;
    kv.release(victim, false, nowMs);
    victim.phase = 'waiting';
    victim.filledTokens = 0;
    victim.numRetractions++;
    retracted.push(victim);
  }
  return retracted;
}

/**
 * The new-token ratio after a retraction: enough reserved for every request still running to decode `decodeSteps`
 * more steps. Today's SGLang divides by the sum of max_new_tokens plus one (no special case for an empty batch).
 */
export function newTokenRatioAfterRetraction(running: readonly EngineRequest[], decodeSteps: number): number {
  let decoded = 0;
  let maxNew = 0;
  for (const request of running) {
    decoded += request.outputTokens;
    maxNew += request.maxNewTokens;
  }
  return Math.min(1, (decoded + decodeSteps * running.length) / (maxNew + 1));
}
