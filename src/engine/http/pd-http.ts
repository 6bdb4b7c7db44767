import { request } from 'undici';
import type { Clock } from '../../clock/clock.js';
import { controlTokenHeaders } from '../../routing/router/control-auth.js';
import type { EngineRequestInput, EngineRequestView } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import { DecodeRole } from '../disaggregation/decode-role.js';
import type { DecodeRoleEngine } from '../disaggregation/decode-role.js';
import type { EngineRole } from '../disaggregation/engine-role.js';
import { KvTransferLink } from '../disaggregation/kv-transfer-link.js';
import type { KvArrival, PdPhases } from '../disaggregation/pd-phases.js';
import type { PdSettings } from '../disaggregation/pd-settings.js';
import { PrefillRole } from '../disaggregation/prefill-role.js';

/**
 * The simulated servers' PD handshake, over real HTTP on loopback. SGLang's decode server reaches its prefill server
 * through the bootstrap server at the injected bootstrap_host:bootstrap_port (python/sglang/srt/disaggregation/
 * mooncake/conn.py: the decode side learns the prefill side's address there, then sends it the preallocated KV
 * indices; the prefill side pushes the KV and reports success). The simulated prefill server serves its bootstrap
 * endpoint on its own HTTP port: the decode server POSTs the room and its own address there once it preallocated
 * (PD_KV_DESTINATION_PATH), and the prefill server POSTs the room's arrival to the decode server once the link model
 * says the last byte is there (PD_KV_ARRIVED_PATH). Both are servelab endpoints: they take the run's control token.
 */
export const PD_KV_DESTINATION_PATH = '/_servelab/pd/kv-destination';
export const PD_KV_ARRIVED_PATH = '/_servelab/pd/kv-arrived';

/** Where a decode server finds the prefill server of a request: the bootstrap fields the router injected. */
export interface BootstrapAddress {
  host: string;
  port: number;
}

export interface PdHttpOptions {
  role: EngineRole;
  engine: DecodeRoleEngine;
  clock: Clock;
  settings: PdSettings;
  controlToken: string;
  /** This server's own base URL (known once it listens). */
  ownUrl(): string;
  /** Hands a request to the engine and starts the stepper. */
  submit(input: EngineRequestInput, nowMs: Milliseconds): void;
  /** A request failed in its PD half (its peer could not be reached, or a PD timeout passed): answer it with this error. */
  fail(requestId: string, message: string): void;
  /** Something went wrong outside any request (a notice for the server's log). */
  log(message: string): void;
}

/** One simulated server's PD half (prefill or decode) with its HTTP messages and, on a prefill server, its link timer. */
export class PdHttp {
  readonly #options: PdHttpOptions;
  readonly prefill: PrefillRole<string> | undefined;
  readonly decode: DecodeRole<BootstrapAddress> | undefined;
  /** Request id to room, for a request in either half's queues (to cancel it when its client goes). */
  readonly #roomOfRequest = new Map<string, string>();
  /** Room to request id, on a decode server (to fail the right request when its prefill server is unreachable). */
  readonly #requestOfRoom = new Map<string, string>();
  /**
   * Each room's timeout (pd-timeouts.ts): on a prefill server its bootstrap timeout, until its decode server says where
   * to send the KV; on a decode server its KV waiting timeout, until the KV arrives. Cleared when its request goes.
   */
  readonly #timeoutTimers = new Map<string, NodeJS.Timeout>();
  #linkTimer: NodeJS.Timeout | null = null;
  #linkTimerMs = Number.POSITIVE_INFINITY;
  #closed = false;

  constructor(options: PdHttpOptions) {
    this.#options = options;
    if (options.role === 'prefill') {
      const link = new KvTransferLink(options.settings.link);
      const prefill: PrefillRole<string> = new PrefillRole<string>(link, options.settings.kvBytesPerToken, {
        submit: (input, nowMs) => options.submit(input, nowMs),
        scheduleLinkEvent: (atMs) => this.#scheduleLink(atMs, prefill),
        deliver: (decodeUrl, room, arrival) => this.#post(decodeUrl, PD_KV_ARRIVED_PATH, { bootstrap_room: room, ...arrivalBody(arrival) }).catch((error: unknown) => options.log(`KV of room ${room} could not be announced to ${decodeUrl}: ${String(error)}`)),
      });
      this.prefill = prefill;
    } else if (options.role === 'decode') {
      this.decode = new DecodeRole<BootstrapAddress>(options.engine, options.settings.numReservedDecodeTokens, {
        register: (source, room, _nowMs, timeoutAtMs) => {
          this.#armTimeout(room, timeoutAtMs, (dueMs) => this.decode?.expire(room, dueMs));
          const url = `http://${source.host.includes(':') ? `[${source.host}]` : source.host}:${source.port}`;
          this.#post(url, PD_KV_DESTINATION_PATH, { bootstrap_room: room, decode_url: options.ownUrl() }).catch((error: unknown) => {
            const requestId = this.#requestOfRoom.get(room);
            if (requestId === undefined) return;
            this.decode?.cancel(room, requestId);
            this.forget(requestId);
            options.fail(requestId, `Decode transfer failed for request rid=${requestId} bootstrap_room=${room}: the prefill server's bootstrap endpoint ${url} could not be reached (${String(error)})`);
          });
        },
        submit: (input, nowMs) => options.submit(input, nowMs),
      }, options.settings.kvWaitingTimeoutMs);
    }
  }

  /** A generation request arrived with its room (and, on a decode server, its prefill server's address). */
  arrive(room: string, input: EngineRequestInput, source: BootstrapAddress | undefined): void {
    const nowMs = this.#options.clock.nowMs();
    this.#roomOfRequest.set(input.id, room);
    if (this.prefill !== undefined) {
      const prefill = this.prefill;
      const timeoutMs = this.#options.settings.bootstrapTimeoutMs;
      this.#armTimeout(room, nowMs + timeoutMs, (dueMs) => prefill.expireBootstrap(room, dueMs, timeoutMs));
      prefill.arrive(room, input, nowMs);
    }
    else if (this.decode !== undefined && source !== undefined) {
      this.#requestOfRoom.set(room, input.id);
      this.decode.arrive(room, input, source, nowMs);
    }
  }

  /** The request left the engine (finished, or aborted before its first token): forget its room. */
  forget(requestId: string): void {
    const room = this.#roomOfRequest.get(requestId);
    if (room === undefined) return;
    // A decode request that ended before its first token still has its phases entry: drop it.
    this.decode?.cancel(room, requestId);
    this.#disarmTimeout(room);
    this.#roomOfRequest.delete(requestId);
    if (this.#requestOfRoom.get(room) === requestId) this.#requestOfRoom.delete(room);
  }

  /** The client of a request that is not in the engine yet went away: take it out of the PD queues. */
  cancel(requestId: string): void {
    const room = this.#roomOfRequest.get(requestId);
    if (room === undefined) return;
    this.prefill?.cancel(room);
    this.decode?.cancel(room, requestId);
    this.forget(requestId);
    // A reservation given back may let the next request in the prealloc queue in, with no step to prompt it.
    this.afterStep();
  }

  /**
   * The PD gauges under SGLang's metric names (sglang-metrics.ts): the queues, and on a prefill server the last
   * transfer's latency and speed (SGLang's prefill scheduler sets kv_transfer_latency_ms and kv_transfer_speed_gb_s
   * when it logs its stats, scheduler_metrics_mixin.py).
   */
  queueGauges(): Record<string, number> {
    if (this.prefill !== undefined) {
      return {
        num_prefill_bootstrap_queue_reqs: this.prefill.bootstrapQueueLength,
        num_prefill_inflight_queue_reqs: this.prefill.inflightCount,
        kv_transfer_latency_ms: this.prefill.lastTransferMs,
        kv_transfer_speed_gb_s: this.prefill.lastTransferGbPerS,
      };
    }
    if (this.decode !== undefined) return { num_decode_prealloc_queue_reqs: this.decode.preallocQueueLength, num_decode_transfer_queue_reqs: this.decode.transferQueueLength };
    return {};
  }

  /** After each engine step and when it goes idle: a decode server preallocates for waiting requests. */
  afterStep(): void {
    this.decode?.preallocate(this.#options.clock.nowMs());
  }

  /** On a decode server, a request's phases once its first token is out (then forgotten). */
  takePhases(view: EngineRequestView): PdPhases | undefined {
    const phases = this.decode?.takePhases(view);
    if (phases !== undefined) this.forget(view.id);
    return phases;
  }

  /** POST PD_KV_DESTINATION_PATH (prefill server): the decode server of a room preallocated its KV. */
  onKvDestination(body: Record<string, unknown>): string | undefined {
    const room = body['bootstrap_room'];
    const decodeUrl = body['decode_url'];
    if (this.prefill === undefined) return 'this server is not a prefill server';
    if (typeof room !== 'string' || typeof decodeUrl !== 'string') return 'bootstrap_room and decode_url must be strings';
    this.#disarmTimeout(room);
    this.prefill.decodeReady(room, decodeUrl, this.#options.clock.nowMs());
    return undefined;
  }

  /** POST PD_KV_ARRIVED_PATH (decode server): a room's KV arrived. */
  onKvArrived(body: Record<string, unknown>): string | undefined {
    if (this.decode === undefined) return 'this server is not a decode server';
    const room = body['bootstrap_room'];
    const arrival = arrivalFrom(body);
    if (typeof room !== 'string' || arrival === undefined) return 'bootstrap_room and the prefill phases are required';
    if (this.decode.kvArrived(room, arrival, this.#options.clock.nowMs())) this.#disarmTimeout(room);
    return undefined;
  }

  close(): void {
    this.#closed = true;
    if (this.#linkTimer !== null) clearTimeout(this.#linkTimer);
    this.#linkTimer = null;
    for (const timer of this.#timeoutTimers.values()) clearTimeout(timer);
    this.#timeoutTimers.clear();
  }

  /**
   * Fails the request of `room` if it is still waiting at `timeoutAtMs` (`expire` says whether it is, and with what
   * error): SGLang's bootstrap timeout on a prefill server, its KV waiting timeout on a decode server (pd-timeouts.ts).
   * The request is answered with the error and forgotten, so that a peer that died or hung costs its requests a bounded
   * wait, not a hang.
   */
  #armTimeout(room: string, timeoutAtMs: Milliseconds, expire: (dueMs: Milliseconds) => { requestId: string; message: string } | undefined): void {
    if (this.#closed) return;
    this.#disarmTimeout(room);
    const timer = setTimeout(() => {
      this.#timeoutTimers.delete(room);
      // The due instant, not the timer's reading: Node may fire a timer up to a millisecond early on the monotonic clock.
      const failed = expire(Math.max(timeoutAtMs, this.#options.clock.nowMs()));
      if (failed === undefined) return;
      this.forget(failed.requestId);
      this.#options.fail(failed.requestId, failed.message);
      // A decode reservation given back may let the next request in the prealloc queue in, with no step to prompt it.
      this.afterStep();
    }, Math.max(0, timeoutAtMs - this.#options.clock.nowMs()));
    // A timeout alone does not keep the server's process alive.
    timer.unref();
    this.#timeoutTimers.set(room, timer);
  }

  #disarmTimeout(room: string): void {
    const timer = this.#timeoutTimers.get(room);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#timeoutTimers.delete(room);
  }

  /** One timer for the link's next event; a transfer that starts earlier than it moves it. */
  #scheduleLink(atMs: Milliseconds, prefill: PrefillRole<string>): void {
    if (this.#closed || atMs === Number.POSITIVE_INFINITY || atMs >= this.#linkTimerMs) return;
    if (this.#linkTimer !== null) clearTimeout(this.#linkTimer);
    this.#linkTimerMs = atMs;
    this.#linkTimer = setTimeout(() => {
      this.#linkTimer = null;
      this.#linkTimerMs = Number.POSITIVE_INFINITY;
      // The model's time, not the timer's: a late timer delays the message, never the transfer's modelled length.
      prefill.onLinkTime(Math.max(atMs, this.#options.clock.nowMs()));
    }, Math.max(0, atMs - this.#options.clock.nowMs()));
  }

  async #post(baseUrl: string, path: string, body: Record<string, unknown>): Promise<void> {
    const answer = await request(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...controlTokenHeaders(this.#options.controlToken) },
      body: JSON.stringify(body),
    });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) throw new Error(`${path} answered ${answer.statusCode}: ${text.slice(0, 200)}`);
  }
}

function arrivalBody(arrival: KvArrival): Record<string, number> {
  return {
    prefill_queue_ms: arrival.prefillQueueMs,
    prefill_forward_ms: arrival.prefillForwardMs,
    kv_transfer_ms: arrival.kvTransferMs,
    cached_tokens: arrival.cachedTokens,
  };
}

function arrivalFrom(body: Record<string, unknown>): KvArrival | undefined {
  const values = [body['prefill_queue_ms'], body['prefill_forward_ms'], body['kv_transfer_ms'], body['cached_tokens']];
  if (!values.every((value) => typeof value === 'number' && Number.isFinite(value))) return undefined;
  const [prefillQueueMs, prefillForwardMs, kvTransferMs, cachedTokens] = values as number[];
  return { prefillQueueMs: prefillQueueMs as number, prefillForwardMs: prefillForwardMs as number, kvTransferMs: kvTransferMs as number, cachedTokens: cachedTokens as number };
}
