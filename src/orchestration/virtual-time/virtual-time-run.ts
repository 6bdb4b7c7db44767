import type { Clock } from '../../clock/clock.js';
import type { RoutingTestConfig } from '../../config/schema.js';
import { VIRTUAL_ITL_REQUEST_LIMIT } from '../../analysis/data-quality-cautions.js';
import { PathDraws } from '../../engine/profile/path-distribution.js';
import type { RegionReport } from '../../engine/profile/region-watch.js';
import { VirtualTimeSimulator } from '../../engine/virtual/virtual-time-simulator.js';
import { ServelabError } from '../../errors/servelab-error.js';
import { loadRoutingPolicy } from '../../routing/policies/registry.js';
import { routingKeyFromBody, routingKeyFromTokenIds } from '../../routing/routing-key.js';
import type { EngineRequestView, ServingLatency } from '../../types/engine.js';
import type { LoadResult } from '../../types/load.js';
import type { RequestRecord } from '../../types/record.js';
import type { RoutingPolicy, RoutingRequest, WorkerState } from '../../types/routing.js';
import type { WorkloadRequest } from '../../types/workload.js';
import { wordTokenIds } from '../../utils/word-tokenizer.js';
import type { PlannedWorkload } from '../build-workload.js';
import { simEngineSettings } from '../server-settings.js';
import { runVirtualPd } from './virtual-pd-run.js';

// Per-token times cost memory for every generated token; above this many requests they are not kept (no ITL), and the
// summary's data-quality section says so.
export { VIRTUAL_ITL_REQUEST_LIMIT };

export type VirtualConfig = Pick<
  RoutingTestConfig,
  | 'numGpus'
  | 'routingPolicy'
  | 'profile'
  | 'maxRunningRequests'
  | 'maxTotalTokens'
  | 'chunkedPrefillSize'
  | 'schedulePolicy'
  | 'scheduleConservativeness'
  | 'disableRadixCache'
  | 'enableMixedChunk'
  | 'pageSize'
  | 'seed'
  | 'maxConcurrency'
  | 'pdDisaggregation'
  | 'numPrefill'
  | 'numDecode'
  | 'prefillPolicy'
  | 'decodePolicy'
  | 'kvTransferBandwidth'
  | 'kvTransferLatencyMs'
>;

/** A worker as the policies see it, whose counts this run keeps itself. */
type MutableWorker = { -readonly [Key in keyof WorkerState]: WorkerState[Key] };

/** What the orchestrator keeps per request while it is in the simulation. */
interface InFlight {
  position: number;
  engineIndex: number;
  /** Kept only for a policy's `onRequestFinished`: otherwise its key (2.9 KB for a 512-token prompt) is held for nothing. */
  routingRequest: RoutingRequest | undefined;
  tokenTimesMs: number[] | undefined;
}

/** What a submitted request's slot in the workload holds afterwards (see `VirtualRunOptions.workload`). */
const RELEASED: WorkloadRequest = { datasetIndex: -1, inputLength: 0, outputLength: 0 };

export interface VirtualRunOptions {
  config: VirtualConfig;
  /**
   * Consumed: each request is replaced by an empty stand-in once it is submitted, so that a million-request run holds
   * the prompts of the requests still to come, not of every request (their memory made long runs slow to collect).
   */
  workload: PlannedWorkload;
  /** Routing test: a policy picks an engine per request. Node test: one engine, no policy. */
  routed: boolean;
  /** Only for anchoring virtual time to the epoch, so files look like a real run's. */
  clock: Clock;
  runId: string;
  /** Called now and then with the number of finished requests. */
  onProgress?: (finished: number) => void;
  /** Called once at the end with the steps simulated outside the profile's measured region (profiles that record one). */
  onRegionReport?: (report: RegionReport) => void;
  /** Every step lasts this many times what the profile says (default 1): the sensitivity band's runs (twin-sensitivity.ts). */
  stepTimeScale?: number;
  /** False: keep no per-token times (no ITL), whatever the run's size; the band's runs need none. */
  keepTokenTimes?: boolean;
}

/**
 * Runs a node or routing test as a discrete-event simulation in one process: no sockets, no timers. The same arrival
 * schedule, datasets, routing policies and engine core as a real-time run, so the two can be compared.
 *
 * The client, the router and the server are one instant apart in virtual time: `arrival_time`, `router_send_time` and
 * `server_created_time` all equal the scheduled time (no network, no client lag). A policy that polls load sees each
 * engine's exact load at the instant it routes (a real router sees it a polling interval late).
 *
 * A profile's serving latency (what the path around the engine adds) is applied by reading the simulator's clock as
 * running behind the client's by the path's upstream part: a request sent at t leaves the router `routerQueueMs`
 * later (routing tests, which take the profile's `routed` path where it has one: a node test has no router), reaches
 * the server `networkMs` after that and the scheduler
 * `ingressMs` after that, so every server-side time is stamped that much late, and the client reads each token
 * `deliveryMs` after the engine made it. With open-loop arrivals this is exact (every arrival shifts alike); a policy
 * then sees each engine's load as it is when the request reaches it. Under a concurrency cap a finished request's slot
 * comes back a round trip (the whole path) after its engine finished it: the client sends the next request once it has
 * read the last token, and it reaches the engine that path later.
 */
export async function runVirtualTime(options: VirtualRunOptions): Promise<LoadResult> {
  // Prefill/decode pairs: both roles and their links in one simulation (virtual-pd-run.ts).
  if (options.routed && options.config.pdDisaggregation === true) return runVirtualPd(options);
  const { config, workload } = options;
  const engineCount = options.routed ? config.numGpus : 1;
  const keepTokenTimes = options.keepTokenTimes !== false && workload.requests.length <= VIRTUAL_ITL_REQUEST_LIMIT;
  const originEpochS = options.clock.nowEpochSeconds();
  const records: RequestRecord[] = new Array<RequestRecord>(workload.requests.length);
  const workers: MutableWorker[] = Array.from({ length: engineCount }, (_, index) => ({ url: `sim://node-${index}`, index, healthy: true, drained: false, inFlight: 0 }));
  const policy: RoutingPolicy | undefined = options.routed ? await loadRoutingPolicy(config.routingPolicy, { seed: config.seed }) : undefined;
  for (const worker of workers) policy?.onWorkerAdded?.(worker);

  const toEpoch = (timeMs: number): number => originEpochS + timeMs / 1000;
  let finished = 0;
  const cap = config.maxConcurrency ?? Infinity;
  /** Requests holding a slot of the cap: in an engine, or finished there and still on their way back to the client. */
  let inFlightCount = 0;
  /**
   * Under a cap, when each finished request's slot comes back (simulator ms, ascending): a round trip (ingress +
   * delivery) after its engine finished it, since the client sends the next request once it has read the last token.
   */
  const slotReturnsMs: number[] = [];
  let slotReturnsHead = 0;
  const settleSlotReturns = (uptoMs: number): void => {
    while (slotReturnsHead < slotReturnsMs.length && (slotReturnsMs[slotReturnsHead] as number) <= uptoMs) {
      slotReturnsHead++;
      inFlightCount--;
    }
    if (slotReturnsHead > 4096 && slotReturnsHead * 2 > slotReturnsMs.length) {
      slotReturnsMs.splice(0, slotReturnsHead);
      slotReturnsHead = 0;
    }
  };
  const held: number[] = [];
  let heldHead = 0;
  // A node test's delivery is drawn per request where the profile measured the path's spread (path-distribution.ts).
  const pathDraws = new PathDraws(config.seed);

  const simulator = await VirtualTimeSimulator.create({
    engines: engineCount,
    settings: { ...simEngineSettings(config), seed: config.seed },
    ...(options.stepTimeScale === undefined ? {} : { stepTimeScale: options.stepTimeScale }),
    events: {
      ...(keepTokenTimes ? { onToken: (_engine: number, request: EngineRequestView, timeMs: number) => (request.driverData as InFlight).tokenTimesMs?.push(timeMs) } : {}),
      onFinish: (engineIndex, request, timeMs) => {
        const state = request.driverData as InFlight;
        const worker = workers[engineIndex] as MutableWorker;
        worker.inFlight--;
        const servingLatency = simulator.servingLatency(engineIndex);
        const constantPath = pathOf(servingLatency, options.routed);
        const latency =
          options.routed || servingLatency.distribution === undefined
            ? constantPath
            : { ...constantPath, deliveryMs: pathDraws.deliveryMs(constantPath.deliveryMs, servingLatency.distribution) };
        const roundTripMs = roundTripMsOf(latency);
        if (cap === Infinity || roundTripMs === 0) inFlightCount--;
        else insertSorted(slotReturnsMs, slotReturnsHead, timeMs + roundTripMs);
        const success = request.finishReason?.type !== 'abort';
        if (state.routingRequest !== undefined) policy?.onRequestFinished?.(state.routingRequest, worker, success);
        finishRecord(records[state.position] as RequestRecord, request, timeMs, state.tokenTimesMs, toEpoch, latency);
        finished++;
        if (finished % 10_000 === 0) options.onProgress?.(finished);
      },
    },
  });

  const send = (position: number, atMs: number): void => {
    const request = workload.requests[position] as WorkloadRequest;
    const record = records[position] as RequestRecord;
    const keyed = policy?.needsRoutingKey === true;
    const routingRequest: RoutingRequest =
      keyed && keyedOnTokenIds(request)
        ? // The workload's ids stay as they are for the whole run, so the policy may keep views of them.
          { requestId: record.requestId, routingKey: routingKeyFromTokenIds(request.inputIds), routingKeyTokenIds: request.inputIds }
        : { requestId: record.requestId, routingKey: keyed ? routingKeyFromBody({ text: request.prompt, messages: request.messages }) : '' };
    let engineIndex = 0;
    if (policy !== undefined) {
      if (policy.usesPolledLoad === true) {
        for (const worker of workers) {
          const load = simulator.load(worker.index);
          worker.polledLoad = { totalTokens: load.usedTokens + load.waitingTokens, waitingUncachedTokens: load.waitingUncachedTokens, tokenUsage: load.tokenUsage, sequence: (worker.polledLoad?.sequence ?? 0) + 1 };
        }
      }
      const chosen = policy.choose(routingRequest, workers);
      if (chosen === undefined) throw new ServelabError('INTERNAL', `routing policy ${policy.name} chose no worker while all were healthy`);
      engineIndex = chosen.index;
    }
    record.arrivalTime = toEpoch(atMs);
    record.routerSendTime = toEpoch(atMs + pathOf(simulator.servingLatency(engineIndex), options.routed).routerQueueMs);
    record.host = `node-${engineIndex}`;
    const input = { id: record.requestId, promptTokenIds: promptTokens(request), maxNewTokens: request.outputLength };
    workload.requests[position] = RELEASED;
    const problem = simulator.validate(engineIndex, input);
    if (problem !== null) {
      // The server refuses it with a 400 before it queues, as SGLang does.
      const refusedAt = record.routerSendTime + pathOf(simulator.servingLatency(engineIndex), options.routed).networkMs / 1000;
      Object.assign(record, { success: false, error: 'http_4xx', httpStatus: 400, errorMessage: problem.slice(0, 300), finishTime: refusedAt, serverCreatedTime: refusedAt });
      finished++;
      return;
    }
    (workers[engineIndex] as MutableWorker).inFlight++;
    inFlightCount++;
    const view = simulator.submit(engineIndex, input, atMs);
    const keptRequest = policy?.onRequestFinished === undefined ? undefined : routingRequest;
    view.driverData = { position, engineIndex, routingRequest: keptRequest, tokenTimesMs: keepTokenTimes ? [] : undefined } satisfies InFlight;
  };

  const offsets = workload.arrivalOffsetsMs;
  for (let position = 0; position < workload.requests.length; position++) {
    const request = workload.requests[position] as WorkloadRequest;
    records[position] = newRecord(request, `${options.runId}-${position}`, toEpoch(offsets[position] as number));
  }
  /** Moves virtual time to the next engine event or slot return, whichever comes first. */
  const advanceToNextChange = (): void => {
    const nextReturnMs = slotReturnsMs[slotReturnsHead] ?? Infinity;
    const nextEventMs = simulator.nextEventMs();
    // A slot returning as a step ends is taken before that step's events fire, as an arrival at that instant is.
    if (nextReturnMs <= nextEventMs) simulator.advanceTo(nextReturnMs);
    // Fire the engine events at exactly nextEventMs (advanceTo runs those strictly before its argument).
    else simulator.advanceTo(nextAfter(nextEventMs));
  };
  for (let position = 0; position < workload.requests.length; position++) {
    const atMs = offsets[position] as number;
    // Under a concurrency cap, arrivals wait for a slot: release held ones as slots come back before this arrival.
    while (heldHead < held.length) {
      settleSlotReturns(simulator.nowMs);
      if (inFlightCount < cap) {
        send(held[heldHead++] as number, simulator.nowMs);
        continue;
      }
      if (Math.min(simulator.nextEventMs(), slotReturnsMs[slotReturnsHead] ?? Infinity) >= atMs) break;
      advanceToNextChange();
    }
    simulator.advanceTo(atMs);
    settleSlotReturns(atMs);
    if (inFlightCount < cap && heldHead === held.length) send(position, atMs);
    else held.push(position);
  }
  while (heldHead < held.length) {
    settleSlotReturns(simulator.nowMs);
    if (inFlightCount < cap) send(held[heldHead++] as number, simulator.nowMs);
    else advanceToNextChange();
  }
  const endMs = simulator.runUntilIdle();
  options.onProgress?.(finished);
  const region = simulator.regionReport();
  if (region !== null) options.onRegionReport?.(region);
  return {
    records,
    warmupRecords: [],
    startTime: originEpochS,
    // The last answer reaches its client the serving latency after its engine's last step.
    endTime: toEpoch(endMs + Math.max(...workers.map(({ index }) => roundTripMsOf(pathOf(simulator.servingLatency(index), options.routed))))),
    interrupted: false,
  };
}

export function newRecord(request: WorkloadRequest, requestId: string, scheduledTime: number): RequestRecord {
  return {
    requestId,
    datasetIndex: request.datasetIndex,
    warmup: false,
    ...(request.prefixGroup === undefined ? {} : { prefixGroup: request.prefixGroup }),
    ...(request.sessionId === undefined ? {} : { sessionId: request.sessionId }),
    inputLength: request.inputLength,
    expectedOutputLength: request.outputLength,
    scheduledTime,
    success: false,
  };
}

export function finishRecord(
  record: RequestRecord,
  request: EngineRequestView,
  timeMs: number,
  tokenTimesMs: number[] | undefined,
  toEpoch: (timeMs: number) => number,
  latency: ServingPath,
): void {
  // The server receives a request the router queue and network after the client sent it; engine-side times run
  // ingressMs behind that receipt; the client reads tokens deliveryMs after the engine made them.
  const upstreamMs = latency.routerQueueMs + latency.networkMs;
  const engineEpoch = (engineMs: number): number => toEpoch(engineMs + upstreamMs + latency.ingressMs);
  const deliveredS = latency.deliveryMs / 1000;
  record.serverCreatedTime = toEpoch(request.receivedMs + upstreamMs);
  record.queueTimeStart = engineEpoch(request.queueEntryMs);
  if (!Number.isNaN(request.forwardEntryMs)) record.queueTimeEnd = engineEpoch(request.forwardEntryMs);
  if (!Number.isNaN(request.prefillFinishedMs)) {
    record.serverFirstTokenTime = engineEpoch(request.prefillFinishedMs);
    record.firstTokenTime = record.serverFirstTokenTime + deliveredS;
  }
  record.finishTime = engineEpoch(timeMs) + deliveredS;
  record.actualPromptTokens = request.promptLength;
  record.actualOutputTokens = request.outputTokens;
  record.cachedTokens = request.cachedTokens;
  record.numRetractions = request.numRetractions;
  const reason = request.finishReason;
  record.finishReason = reason?.type;
  record.success = reason !== null && reason.type !== 'abort';
  if (!record.success) {
    record.error = 'server_error';
    record.errorMessage = reason !== null && reason.type === 'abort' ? reason.message.slice(0, 300) : 'ended without a finish reason';
  }
  if (tokenTimesMs !== undefined && tokenTimesMs.length > 1) {
    const gaps = new Array<number>(tokenTimesMs.length - 1);
    for (let index = 1; index < tokenTimesMs.length; index++) gaps[index - 1] = ((tokenTimesMs[index] as number) - (tokenTimesMs[index - 1] as number)) / 1000;
    record.interTokenLatencies = gaps;
  }
}

/**
 * Whether the request's routing key is its token ids (a body of `input_ids` only): then it is built from the ids
 * (routingKeyFromTokenIds), the key routingKeyFromBody gives the body, without the body.
 */
export function keyedOnTokenIds(request: WorkloadRequest): request is WorkloadRequest & { inputIds: ArrayLike<number> } {
  return request.prompt === undefined && request.inputIds !== undefined;
}

/** The prompt as the simulated server tokenizes it (one token per word), or the exact ids it was given. */
export function promptTokens(request: WorkloadRequest): ArrayLike<number> {
  if (request.inputIds !== undefined) return request.inputIds;
  if (request.prompt !== undefined) return wordTokenIds(request.prompt);
  return wordTokenIds((request.messages ?? []).map((message) => message.content).join(' '));
}

/** Inserts `value` into the ascending `values[from..]`, keeping it ascending. */
function insertSorted(values: number[], from: number, value: number): void {
  let low = from;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((values[middle] as number) <= value) low = middle + 1;
    else high = middle;
  }
  if (low === values.length) values.push(value);
  else values.splice(low, 0, value);
}

/** The smallest double above `value`, so `advanceTo` fires the events due exactly at `value`. */
function nextAfter(value: number): number {
  if (!Number.isFinite(value)) return value;
  const buffer = new Float64Array([value]);
  const bits = new BigInt64Array(buffer.buffer);
  bits[0] = (bits[0] as bigint) + (value >= 0 ? 1n : -1n);
  return buffer[0] as number;
}

/** The serving path with every stage present: zero where the profile has none, and no router queue without a router. */
export interface ServingPath {
  routerQueueMs: number;
  networkMs: number;
  ingressMs: number;
  deliveryMs: number;
}

/** A routing test takes the profile's path through a router where it has one; a node test the direct path. */
export function pathOf(latency: ServingLatency, routed: boolean): ServingPath {
  const viaRouter = routed ? latency.routed : undefined;
  return {
    routerQueueMs: viaRouter?.routerQueueMs ?? 0,
    networkMs: viaRouter?.networkMs ?? latency.networkMs ?? 0,
    ingressMs: latency.ingressMs,
    deliveryMs: viaRouter?.deliveryMs ?? latency.deliveryMs,
  };
}

/** From the client sending a request to the engine seeing it, plus from the engine's last token to the client reading it. */
export function roundTripMsOf(latency: ServingPath): number {
  return latency.routerQueueMs + latency.networkMs + latency.ingressMs + latency.deliveryMs;
}
