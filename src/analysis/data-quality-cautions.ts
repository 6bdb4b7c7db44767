import type { RequestRecord } from '../types/record.js';
import type { RunData } from '../types/run.js';
import type { DataQualitySummary } from '../types/summary.js';

/**
 * Per-token times cost memory for every generated token, so virtual time keeps them only for runs of at most this many
 * requests; above it ITL is absent (TPOT is not: it needs only the first and last token).
 */
export const VIRTUAL_ITL_REQUEST_LIMIT = 200_000;

/**
 * What the numbers of a run cannot be trusted for, though no field was left out: said beside the screened fields
 * (the data-quality section), because a number that is silently wrong reads like a right one.
 */
export function dataQualityCautions(run: Pick<RunData, 'info' | 'config'>, records: readonly RequestRecord[]): string[] {
  const cautions: string[] = [];
  const tokenizer = run.config['tokenizerPath'];
  if (run.info.target === 'sim' && typeof tokenizer === 'string') {
    let serverTokens = 0;
    let tokenizerTokens = 0;
    for (const record of records) {
      if (!record.success || record.actualPromptTokens === undefined) continue;
      serverTokens += record.actualPromptTokens;
      tokenizerTokens += record.inputLength;
    }
    const share = tokenizerTokens > 0 ? ` (it reported ${((100 * serverTokens) / tokenizerTokens).toFixed(0)}% of the tokenizer's count)` : '';
    cautions.push(
      `input tokens and input tok/s are the simulated server's counts, and it counts words, not the tokens of the tokenizer ${tokenizer}${share}; ` +
        'the prompts\' tokenizer counts are in input_length. Run a real server with that model for its token counts',
    );
  }
  if (run.info.simulated && records.length > VIRTUAL_ITL_REQUEST_LIMIT && !records.some((record) => record.interTokenLatencies !== undefined)) {
    cautions.push(
      `no inter-token latencies (ITL): virtual time keeps per-token times for runs of at most ${VIRTUAL_ITL_REQUEST_LIMIT.toLocaleString('en-US')} requests ` +
        `and this one has ${records.length.toLocaleString('en-US')}; TPOT and every other latency are complete. Split the run to see ITL`,
    );
  }
  const pdSum = pdPhaseSumCaution(records);
  if (pdSum !== undefined) cautions.push(pdSum);
  return cautions;
}

/**
 * How far a PD request's phases may add up beyond its TTFT before it is reported: the phases are the servers' own
 * durations and TTFT the client's, read off different clocks at a microsecond or so; a millisecond is ample for that.
 */
export const PD_PHASE_SUM_SLACK_S = 0.001;

/**
 * A PD request's first token comes after its prefill queue, its prefill forward, its KV transfer and its decode queue,
 * one after the other, plus the network and the router (docs/metrics.md, "PD phases"): those four phases can add up to
 * less than its TTFT, never more. Records where they add up to more are named (their phase columns or their TTFT are
 * wrong): the first one's id and by how much it is off.
 */
export function pdPhaseSumCaution(records: readonly RequestRecord[]): string | undefined {
  let checked = 0;
  let broken = 0;
  let worst: { id: string; excessS: number } | undefined;
  for (const record of records) {
    const { prefillQueueTime, prefillForwardTime, kvTransferTime, decodeQueueTime, firstTokenTime, arrivalTime } = record;
    if (prefillQueueTime === undefined || prefillForwardTime === undefined || kvTransferTime === undefined || decodeQueueTime === undefined) continue;
    if (firstTokenTime === undefined || arrivalTime === undefined) continue;
    checked++;
    const excessS = prefillQueueTime + prefillForwardTime + kvTransferTime + decodeQueueTime - (firstTokenTime - arrivalTime);
    if (excessS <= PD_PHASE_SUM_SLACK_S) continue;
    broken++;
    if (worst === undefined || excessS > worst.excessS) worst = { id: record.requestId, excessS };
  }
  if (worst === undefined) return undefined;
  return (
    `${broken} of ${checked} PD requests have phases (prefill_queue_time + prefill_forward_time + kv_transfer_time + decode_queue_time) adding up to more than their TTFT, ` +
    `which they cannot (the worst, ${worst.id}, by ${(worst.excessS * 1000).toFixed(3)} ms): their phase columns or their TTFT are wrong; check the servers' phase reports against the client's times`
  );
}

/** The data-quality section with its cautions, when there are any (absent otherwise, as in files written before them). */
export function withCautions(section: DataQualitySummary, cautions: string[]): DataQualitySummary {
  return cautions.length === 0 ? section : { ...section, cautions };
}
