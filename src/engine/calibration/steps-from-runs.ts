import { attentionPairs } from '../profile/cost-model.js';
import { decodeObservation } from './fit-profile.js';
import type { StepObservation } from './fit-profile.js';
import type { RunRequest } from './run-records.js';

/** Samples of the batch a request decoded in, spread over its decode span. */
const SAMPLES_PER_SPAN = 8;

/**
 * Step observations read off a run's records, for a first roofline fit when `--from-runs` has no profile to start
 * from. They are approximate by nature, which is why the fit is then refined by replaying the runs:
 *
 * - decode: a request's decode span over its decode steps is its mean step; the batch it shared and the KV that batch
 *   read are sampled at 8 instants of the span from the other requests' spans (a request decoding at t holds its prompt
 *   plus the tokens it made by then, at its own mean rate). On an engine that pauses decoding for prefill steps the
 *   span also holds those, so the figure is high under load;
 * - prefill: requests that entered the forward pass together and had their first token together made one prefill step,
 *   when each prompt was within one chunk; the step computed their uncached tokens. On an engine that mixes decoding
 *   into that step, the step also decoded the running batch, so again the figure is high under load.
 */
export function stepsFromRuns(requestsOfRuns: readonly (readonly RunRequest[])[], chunkedPrefillSize: number | undefined): StepObservation[] {
  // The decode reading compares every request with every other: the first 2,000 of a run are plenty for a start.
  return requestsOfRuns.flatMap((requests) => [...decodeSteps(requests.slice(0, 2000)), ...prefillSteps(requests, chunkedPrefillSize)]);
}

function decodeSteps(requests: readonly RunRequest[]): StepObservation[] {
  const observations: StepObservation[] = [];
  const rates = requests.map((request) => (request.outputTokens > 1 ? (request.finishedMs - request.firstTokenMs) / (request.outputTokens - 1) : Number.NaN));
  requests.forEach((request) => {
    if (request.outputTokens < 3) return;
    const spanMs = request.finishedMs - request.firstTokenMs;
    if (!(spanMs > 0)) return;
    let batchSum = 0;
    let kvSum = 0;
    for (let sample = 0; sample < SAMPLES_PER_SPAN; sample++) {
      const atMs = request.firstTokenMs + ((sample + 0.5) / SAMPLES_PER_SPAN) * spanMs;
      requests.forEach((other, otherIndex) => {
        if (other.firstTokenMs > atMs || other.finishedMs <= atMs) return;
        const stepMs = rates[otherIndex] as number;
        const made = Number.isFinite(stepMs) && stepMs > 0 ? Math.min(other.outputTokens, 1 + (atMs - other.firstTokenMs) / stepMs) : 1;
        batchSum++;
        kvSum += other.promptTokens + made;
      });
    }
    const batch = batchSum / SAMPLES_PER_SPAN;
    observations.push(decodeObservation(batch, kvSum / Math.max(batchSum, 1), spanMs / (request.outputTokens - 1)));
  });
  return observations;
}

function prefillSteps(requests: readonly RunRequest[], chunkedPrefillSize: number | undefined): StepObservation[] {
  const groups = new Map<string, RunRequest[]>();
  for (const request of requests) {
    // Stamps of one step agree to the microsecond on a real engine; 0.1 ms leaves room for rounding in the files.
    const key = `${Math.round(request.forwardMs * 10)}:${Math.round(request.firstTokenMs * 10)}`;
    groups.set(key, [...(groups.get(key) ?? []), request]);
  }
  const observations: StepObservation[] = [];
  for (const members of groups.values()) {
    const chunks = members.map((request) => Math.max(1, request.promptTokens - request.cachedTokens));
    const tokens = chunks.reduce((sum, chunk) => sum + chunk, 0);
    if (chunkedPrefillSize !== undefined && tokens > chunkedPrefillSize) continue;
    const first = members[0] as RunRequest;
    const stepMs = first.firstTokenMs - first.forwardMs;
    if (!(stepMs > 0)) continue;
    observations.push({
      kind: 'prefill',
      size: tokens,
      secondary: chunks.reduce((sum, chunk) => sum + attentionPairs(0, chunk), 0),
      stepMs,
      label: `prefill ${tokens} tokens (${members.length} request${members.length === 1 ? '' : 's'}, from a run)`,
    });
  }
  return observations;
}
