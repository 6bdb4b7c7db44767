import { VirtualPdCluster } from '../../engine/virtual/virtual-pd-cluster.js';
import type { PdSettingsInput } from '../../engine/disaggregation/pd-settings.js';
import { ServelabError } from '../../errors/servelab-error.js';
import { newBootstrapRoom } from '../../routing/pd/bootstrap.js';
import { choosePdPair } from '../../routing/pd/pd-pair.js';
import { loadRoutingPolicy } from '../../routing/policies/registry.js';
import { routingKeyFromBody, routingKeyFromTokenIds } from '../../routing/routing-key.js';
import type { LoadResult } from '../../types/load.js';
import type { RequestRecord } from '../../types/record.js';
import type { RoutingRequest, WorkerState } from '../../types/routing.js';
import type { WorkloadRequest } from '../../types/workload.js';
import { parseBandwidth } from '../../utils/parse-bandwidth.js';
import { simEngineSettings } from '../server-settings.js';
import type { VirtualRunOptions } from './virtual-time-run.js';
import { finishRecord, keyedOnTokenIds, newRecord, pathOf, promptTokens, roundTripMsOf, VIRTUAL_ITL_REQUEST_LIMIT } from './virtual-time-run.js';

type MutableWorker = { -readonly [Key in keyof WorkerState]: WorkerState[Key] };

interface InFlight {
  position: number;
  tokenTimesMs: number[] | undefined;
}

/**
 * A PD routing test in virtual time: `numPrefill` prefill and `numDecode` decode engines with their links
 * (VirtualPdCluster, the same PD halves as the real-time sim servers), each request's pair chosen by the prefill and
 * decode policies as the builtin router does, and the same record columns as a real-time PD run (prefill_host,
 * decode_host, bootstrap_room and the phases). Nodes are named as in a real run: the first numPrefill prefill, the rest
 * decode. Open-loop arrivals only (no concurrency cap yet). The serving path of the profile applies as in a co-located
 * virtual run, taken on the decode server's answer.
 */
export async function runVirtualPd(options: VirtualRunOptions): Promise<LoadResult> {
  const { config, workload } = options;
  if (config.maxConcurrency !== undefined) {
    throw new ServelabError('INVALID_CONFIG', '--pd-disaggregation --virtual-time runs open-loop arrivals so far: drop --max-concurrency / --concurrency, or run in real time');
  }
  const prefillCount = config.numPrefill ?? 1;
  const decodeCount = config.numDecode ?? 1;
  const keepTokenTimes = options.keepTokenTimes !== false && workload.requests.length <= VIRTUAL_ITL_REQUEST_LIMIT;
  const originEpochS = options.clock.nowEpochSeconds();
  const toEpoch = (timeMs: number): number => originEpochS + timeMs / 1000;
  const records: RequestRecord[] = new Array<RequestRecord>(workload.requests.length);
  const name = (engineIndex: number): string => `node-${engineIndex}`;
  const prefillWorkers: MutableWorker[] = Array.from({ length: prefillCount }, (_, index) => ({ url: `sim://${name(index)}`, index, healthy: true, drained: false, inFlight: 0 }));
  const decodeWorkers: MutableWorker[] = Array.from({ length: decodeCount }, (_, index) => ({ url: `sim://${name(prefillCount + index)}`, index, healthy: true, drained: false, inFlight: 0 }));
  const prefillPolicy = await loadRoutingPolicy(config.prefillPolicy ?? config.routingPolicy, { seed: config.seed });
  const decodePolicy = await loadRoutingPolicy(config.decodePolicy ?? config.routingPolicy, { seed: config.seed + 1 });
  for (const worker of prefillWorkers) prefillPolicy.onWorkerAdded?.(worker);
  for (const worker of decodeWorkers) decodePolicy.onWorkerAdded?.(worker);
  const pd: PdSettingsInput = {
    ...(config.kvTransferBandwidth === undefined ? {} : { kvTransferBandwidthBytesPerSecond: parseBandwidth(config.kvTransferBandwidth) }),
    ...(config.kvTransferLatencyMs === undefined ? {} : { kvTransferLatencyMs: config.kvTransferLatencyMs }),
  };
  const settings = { ...simEngineSettings(config), seed: config.seed };
  let finished = 0;
  const cluster = await VirtualPdCluster.create({
    prefill: Array.from({ length: prefillCount }, (_, index) => ({ ...settings, seed: config.seed * 1000 + index })),
    decode: Array.from({ length: decodeCount }, (_, index) => ({ ...settings, seed: config.seed * 1000 + prefillCount + index })),
    pd,
    ...(options.stepTimeScale === undefined ? {} : { stepTimeScale: options.stepTimeScale }),
    events: {
      // The router's count of prefill legs in flight, which load-aware prefill policies read (cache_aware's balance
      // check, least_load): a leg is in flight from its dispatch until its KV transfer ends, as the prefill server answers then.
      onPrefillDone: (prefillIndex) => {
        (prefillWorkers[prefillIndex] as MutableWorker).inFlight--;
      },
      ...(keepTokenTimes ? { onToken: (_decode: number, request, timeMs: number) => (request.driverData as InFlight).tokenTimesMs?.push(timeMs) } : {}),
      onFinish: (decodeIndex, request, timeMs, phases) => {
        const state = request.driverData as InFlight;
        const record = records[state.position] as RequestRecord;
        (decodeWorkers[decodeIndex] as MutableWorker).inFlight--;
        const latency = pathOf(cluster.simulator.servingLatency(prefillCount + decodeIndex), true);
        finishRecord(record, request, timeMs, state.tokenTimesMs, toEpoch, latency);
        if (phases !== undefined) {
          record.prefillQueueTime = phases.prefillQueueMs / 1000;
          record.prefillForwardTime = phases.prefillForwardMs / 1000;
          record.kvTransferTime = phases.kvTransferMs / 1000;
          record.kvTransferWaitTime = phases.kvTransferWaitMs / 1000;
          record.decodeQueueTime = phases.decodeQueueMs / 1000;
        }
        finished++;
        if (finished % 10_000 === 0) options.onProgress?.(finished);
      },
    },
  });
  const roomBytes = seededBytes(config.seed);
  const offsets = workload.arrivalOffsetsMs;
  for (let position = 0; position < workload.requests.length; position++) {
    const request = workload.requests[position] as WorkloadRequest;
    const record = newRecord(request, `${options.runId}-${position}`, toEpoch(offsets[position] as number));
    records[position] = record;
  }
  for (let position = 0; position < workload.requests.length; position++) {
    const atMs = offsets[position] as number;
    const request = workload.requests[position] as WorkloadRequest;
    const record = records[position] as RequestRecord;
    cluster.advanceTo(atMs);
    const keyed = prefillPolicy.needsRoutingKey || decodePolicy.needsRoutingKey;
    const routingRequest: RoutingRequest =
      keyed && keyedOnTokenIds(request)
        ? { requestId: record.requestId, routingKey: routingKeyFromTokenIds(request.inputIds), routingKeyTokenIds: request.inputIds }
        : { requestId: record.requestId, routingKey: keyed ? routingKeyFromBody({ text: request.prompt, messages: request.messages }) : '' };
    const pair = choosePdPair(routingRequest, prefillPolicy, prefillWorkers, decodePolicy, decodeWorkers);
    if (pair === undefined) throw new ServelabError('INTERNAL', 'the PD policies chose no pair while every server was healthy');
    const decodeEngine = prefillCount + pair.decode.index;
    const latency = pathOf(cluster.simulator.servingLatency(decodeEngine), true);
    record.arrivalTime = toEpoch(atMs);
    record.routerSendTime = toEpoch(atMs + latency.routerQueueMs);
    record.host = name(decodeEngine);
    record.prefillHost = name(pair.prefill.index);
    record.decodeHost = name(decodeEngine);
    const room = newBootstrapRoom(roomBytes).toString();
    record.bootstrapRoom = room;
    const input = { id: record.requestId, promptTokenIds: promptTokens(request), maxNewTokens: request.outputLength, driverData: { position, tokenTimesMs: keepTokenTimes ? [] : undefined } satisfies InFlight };
    const problem = cluster.validate(pair.prefill.index, input);
    if (problem !== null) {
      const refusedAt = record.routerSendTime + latency.networkMs / 1000;
      Object.assign(record, { success: false, error: 'http_4xx', httpStatus: 400, errorMessage: problem.slice(0, 300), finishTime: refusedAt, serverCreatedTime: refusedAt });
      finished++;
      continue;
    }
    (decodeWorkers[pair.decode.index] as MutableWorker).inFlight++;
    (prefillWorkers[pair.prefill.index] as MutableWorker).inFlight++;
    // Both legs reach their servers the router queue and network after the client sent them, as in a co-located run.
    cluster.submit(pair.prefill.index, pair.decode.index, room, input, atMs);
  }
  const endMs = cluster.runUntilIdle();
  options.onProgress?.(finished);
  const lastPathMs = Math.max(...decodeWorkers.map(({ index }) => roundTripMsOf(pathOf(cluster.simulator.servingLatency(prefillCount + index), true))));
  return { records, warmupRecords: [], startTime: originEpochS, endTime: toEpoch(endMs + lastPathMs), interrupted: false };
}

/** 8 bytes at a time from a seeded splitmix64, so a virtual run's rooms are the same every time it runs. */
function seededBytes(seed: number): () => Uint8Array {
  let state = BigInt.asUintN(64, BigInt(seed) * 0x9e3779b97f4a7c15n + 1n);
  return () => {
    state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n);
    let z = state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    z ^= z >> 31n;
    const bytes = new Uint8Array(8);
    for (let index = 7; index >= 0; index--) {
      bytes[index] = Number(z & 0xffn);
      z >>= 8n;
    }
    return bytes;
  };
}
