import { ServelabError } from '../../errors/servelab-error.js';
import type { EngineRequestInput, EngineRequestView } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import type { EngineSettings } from '../create-engine.js';
import { DecodeRole } from '../disaggregation/decode-role.js';
import { KvTransferLink } from '../disaggregation/kv-transfer-link.js';
import type { PdPhases } from '../disaggregation/pd-phases.js';
import { resolvePdSettings } from '../disaggregation/pd-settings.js';
import type { PdSettingsInput } from '../disaggregation/pd-settings.js';
import { PrefillRole } from '../disaggregation/prefill-role.js';
import { loadProfile } from '../profile/load-profile.js';
import { VirtualTimeSimulator } from './virtual-time-simulator.js';

/** What the driver hears from a PD cluster in virtual time: the decode servers' answers, as in a co-located run. */
export interface VirtualPdEvents {
  onToken?(decodeIndex: number, request: EngineRequestView, timeMs: Milliseconds): void;
  /** The request finished on its decode server; `phases` once it got its first token there (undefined for an abort before). */
  onFinish(decodeIndex: number, request: EngineRequestView, timeMs: Milliseconds, phases: PdPhases | undefined): void;
  /**
   * The prefill server is done with the request: its KV reached the decode server, or it ended without a transfer. A
   * router counts the prefill leg in flight until here (its answer comes after the transfer), as load-aware policies
   * read that count.
   */
  onPrefillDone?(prefillIndex: number, request: EngineRequestView): void;
}

export interface VirtualPdClusterOptions {
  /** One settings object per prefill server and per decode server (role is set here). */
  prefill: EngineSettings[];
  decode: EngineSettings[];
  /** The link, KV size and decode reservation (each overriding the profile's figure). */
  pd?: PdSettingsInput;
  events: VirtualPdEvents;
  /** Every server's steps scaled (VirtualTimeSimulatorOptions.stepTimeScale); the KV link's times are not. */
  stepTimeScale?: number;
}

/**
 * Prefill and decode servers in one virtual-time simulation, with the same PD halves (prefill-role.ts, decode-role.ts)
 * and link model as the real-time sim servers: each prefill server has its own link, which its transfers in flight
 * share. Messages between the servers (the decode server's preallocation notice, the KV-arrived notice) take no time:
 * in a real deployment they are a loopback or NIC round trip, small beside the transfer. Engines 0..P-1 of the
 * simulator prefill, P..P+D-1 decode.
 */
export class VirtualPdCluster {
  readonly simulator: VirtualTimeSimulator;
  readonly prefillCount: number;
  readonly decodeCount: number;
  readonly #prefill: PrefillRole<number>[] = [];
  readonly #decode: DecodeRole<number>[] = [];
  readonly #phases = new Map<string, PdPhases>();

  static async create(options: VirtualPdClusterOptions): Promise<VirtualPdCluster> {
    if (options.prefill.length === 0 || options.decode.length === 0) {
      throw new ServelabError('INVALID_CONFIG', `a PD cluster needs at least one prefill and one decode server (got ${options.prefill.length} and ${options.decode.length})`);
    }
    // The simulator's events reach the cluster, which needs the simulator to exist first.
    const handlers: { onToken?: VirtualPdCluster['handleToken']; onFinish?: VirtualPdCluster['handleFinish']; onStep?: (engineIndex: number, timeMs: Milliseconds) => void } = {};
    const simulator = await VirtualTimeSimulator.create({
      engines: [...options.prefill.map((settings) => ({ ...settings, role: 'prefill' as const })), ...options.decode.map((settings) => ({ ...settings, role: 'decode' as const }))],
      events: {
        onToken: (engineIndex, request, timeMs) => handlers.onToken?.(engineIndex, request, timeMs),
        onFinish: (engineIndex, request, timeMs) => handlers.onFinish?.(engineIndex, request, timeMs),
        onStepCompleted: (engineIndex, timeMs) => handlers.onStep?.(engineIndex, timeMs),
      },
      ...(options.stepTimeScale === undefined ? {} : { stepTimeScale: options.stepTimeScale }),
    });
    const cluster = new VirtualPdCluster(simulator, options);
    handlers.onToken = (engineIndex, request, timeMs) => cluster.handleToken(engineIndex, request, timeMs);
    handlers.onFinish = (engineIndex, request, timeMs) => cluster.handleFinish(engineIndex, request, timeMs);
    // A decode server preallocates after each of its steps (KV may have been freed), as SGLang's event loop does.
    handlers.onStep = (engineIndex, timeMs) => {
      if (engineIndex >= cluster.prefillCount) cluster.#decode[engineIndex - cluster.prefillCount]?.preallocate(timeMs);
    };
    return cluster;
  }

  private constructor(simulator: VirtualTimeSimulator, options: VirtualPdClusterOptions) {
    this.simulator = simulator;
    this.prefillCount = options.prefill.length;
    this.decodeCount = options.decode.length;
    this.#events = options.events;
    options.prefill.forEach((settings, prefillIndex) => {
      const pd = resolvePdSettings(loadProfile(settings.profile), options.pd);
      const link = new KvTransferLink(pd.link);
      let scheduledMs = Number.POSITIVE_INFINITY;
      const role: PrefillRole<number> = new PrefillRole<number>(link, pd.kvBytesPerToken, {
        submit: (input, nowMs) => simulator.submit(prefillIndex, input, nowMs),
        // One timer per new earliest time: a timer that fires after the link's next event moved later finds nothing due.
        scheduleLinkEvent: (atMs) => {
          if (atMs === Number.POSITIVE_INFINITY || atMs >= scheduledMs) return;
          scheduledMs = atMs;
          simulator.at(atMs, (nowMs) => {
            if (nowMs === scheduledMs) scheduledMs = Number.POSITIVE_INFINITY;
            role.onLinkTime(nowMs);
          });
        },
        deliver: (decodeIndex, room, arrival, nowMs) => this.#decode[decodeIndex]?.kvArrived(room, arrival, nowMs),
      });
      this.#prefill.push(role);
    });
    options.decode.forEach((settings, decodeIndex) => {
      const pd = resolvePdSettings(loadProfile(settings.profile), options.pd);
      const engineIndex = this.prefillCount + decodeIndex;
      this.#decode.push(
        new DecodeRole<number>(
          simulator.engine(engineIndex),
          pd.numReservedDecodeTokens,
          {
            // Virtual time models no transfer failure: every KV arrives, so the waiting timeout is not armed here.
            register: (prefillIndex, room, nowMs) => this.#prefill[prefillIndex]?.decodeReady(room, decodeIndex, nowMs),
            submit: (input, nowMs) => simulator.submit(engineIndex, input, nowMs),
          },
          pd.kvWaitingTimeoutMs,
        ),
      );
    });
  }

  readonly #events: VirtualPdEvents;

  get nowMs(): Milliseconds {
    return this.simulator.nowMs;
  }

  /** Checks a request as the prefill server would before accepting it; null when acceptable, else the 400 message. */
  validate(prefillIndex: number, input: EngineRequestInput): string | null {
    return this.simulator.validate(prefillIndex, input);
  }

  /**
   * Sends a PD request's two legs at `atMs`, as the router does (both at once, same room): the prefill leg asks for one
   * token (a prefill server stops after its first, start-sim-server.ts), the decode leg for the whole output.
   */
  submit(prefillIndex: number, decodeIndex: number, room: string, input: EngineRequestInput, atMs: Milliseconds): void {
    const prefill = this.#prefill[prefillIndex];
    const decode = this.#decode[decodeIndex];
    if (prefill === undefined || decode === undefined) {
      throw new ServelabError('INVALID_CONFIG', `no prefill server ${prefillIndex} or decode server ${decodeIndex} (${this.prefillCount} prefill, ${this.decodeCount} decode)`);
    }
    this.simulator.advanceTo(atMs);
    prefill.arrive(room, { id: `${input.id}#prefill`, promptTokenIds: input.promptTokenIds, maxNewTokens: Math.min(input.maxNewTokens, 1) }, atMs);
    decode.arrive(room, input, prefillIndex, atMs);
  }

  advanceTo(timeMs: Milliseconds): void {
    this.simulator.advanceTo(timeMs);
  }

  nextEventMs(): Milliseconds {
    return this.simulator.nextEventMs();
  }

  runUntilIdle(): Milliseconds {
    return this.simulator.runUntilIdle();
  }

  private handleToken(engineIndex: number, request: EngineRequestView, timeMs: Milliseconds): void {
    if (engineIndex < this.prefillCount) return;
    const decodeIndex = engineIndex - this.prefillCount;
    if (request.outputTokens === 1) {
      const phases = this.#decode[decodeIndex]?.takePhases(request);
      if (phases !== undefined) this.#phases.set(request.id, phases);
    }
    this.#events.onToken?.(decodeIndex, request, timeMs);
  }

  private handleFinish(engineIndex: number, request: EngineRequestView, timeMs: Milliseconds): void {
    if (engineIndex < this.prefillCount) {
      // The prefill leg's answer is dropped by the router; its KV goes over the link meanwhile, and the leg ends when
      // the transfer does.
      const done = (): void => this.#events.onPrefillDone?.(engineIndex, request);
      if (this.#prefill[engineIndex]?.onEngineFinish(request, timeMs, done) !== true) done();
      return;
    }
    const phases = this.#phases.get(request.id);
    this.#phases.delete(request.id);
    this.#events.onFinish(engineIndex - this.prefillCount, request, timeMs, phases);
  }
}
