import { isIP } from 'node:net';
import { request, type Dispatcher } from 'undici';
import { clockAnchorOf, type Clock } from '../../clock/clock.js';
import { DEFAULT_MAX_SSE_EVENT_BYTES, SseParser } from '../../clients/sse/sse-parser.js';
import { listeningUrl } from '../../cluster/placement/listening-url.js';
import { ServelabError } from '../../errors/servelab-error.js';
import { controlTokenHeaders, CONTROL_TOKEN_ENV } from '../../routing/router/control-auth.js';
import type { PlacedProcess, ProcessPlacement } from '../../types/cluster.js';
import type { LoadProgress } from '../../types/load.js';
import type { RequestRecord } from '../../types/record.js';
import { exchangeSample, GeneratorClock } from './generator-clock.js';
import { GENERATOR_LISTENING_LINE, GENERATOR_PATHS, type ClockStamps, type GeneratorDone, type GeneratorFailed } from './generator-protocol.js';

export interface LaunchGeneratorSettings {
  placement: ProcessPlacement;
  /** The node to run on; undefined: the placement's default. */
  node: string | undefined;
  index: number;
  /** The servelab CLI to run there (`servelab load-generator`). */
  cliPath: string;
  controlToken: string;
  logPath?: string;
  readyTimeoutMs: number;
  dispatcher: Dispatcher;
  clock: Clock;
}

/**
 * Where a generator listens: on the node's address when the placement gives one (`127.0.0.1` locally: nothing is
 * exposed beyond this host), else on every interface of the node, accepting the node's name in the Host header;
 * `listeningUrl` then puts the address the placement reaches the process at in place of the wildcard it prints.
 */
function listenArgs(host: string): string[] {
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return ['--host', host.replace(/^\[|\]$/g, ''), '--port', '0'];
  return ['--host', '0.0.0.0', '--port', '0', '--advertised-host', host];
}

/** How the records stream of a generator ended. */
export type StreamEnd = { kind: 'done'; done: GeneratorDone } | { kind: 'failed'; failed: GeneratorFailed } | { kind: 'lost'; reason: string };

/**
 * The coordinator's side of one load-generator process: where it runs, its clock, and the HTTP calls that drive it
 * (generator-protocol.ts). Started through the run's placement, so the same code places it on this host or a
 * cluster node; its URL is learned from the line it prints (no port or address is assumed).
 */
export class GeneratorHandle {
  readonly clock = new GeneratorClock();
  /** Records received so far, as the generator measured them (its clock). */
  readonly rawRecords: RequestRecord[] = [];

  private constructor(
    readonly name: string,
    readonly node: string | undefined,
    readonly process: PlacedProcess,
    readonly url: string,
    private readonly settings: LaunchGeneratorSettings,
  ) {}

  static async launch(settings: LaunchGeneratorSettings): Promise<GeneratorHandle> {
    const name = `load-generator ${settings.index}`;
    const process = settings.placement.spawn({
      name,
      ...(settings.node === undefined ? {} : { node: settings.node }),
      command: globalThis.process.execPath,
      args: [settings.cliPath, 'load-generator', ...listenArgs(settings.placement.hostOf(settings.node))],
      // The token only in its environment: never on a command line, which `ps` and the log show.
      env: { [CONTROL_TOKEN_ENV]: settings.controlToken },
      ...(settings.logPath === undefined ? {} : { logPath: settings.logPath }),
      stopGraceMs: 3_000,
    });
    try {
      const url = await listeningUrl(process, GENERATOR_LISTENING_LINE, settings.readyTimeoutMs);
      return new GeneratorHandle(name, settings.node, process, url, settings);
    } catch (error) {
      await process.stop();
      throw error;
    }
  }

  /** `load-generator 1 (node n2)`, for messages. */
  get label(): string {
    return this.node === undefined ? this.name : `${this.name} (node ${this.node})`;
  }

  /** One clock exchange; its bounds join the generator's clock estimate. Rejects when no answer comes within `timeoutMs`. */
  async exchangeClock(timeoutMs = 5_000): Promise<void> {
    const sentEpochMs = this.settings.clock.nowEpochSeconds() * 1000;
    const answer = await request(`${this.url}${GENERATOR_PATHS.clock}`, {
      method: 'GET',
      headers: controlTokenHeaders(this.settings.controlToken),
      dispatcher: this.settings.dispatcher,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const stamps = (await answer.body.json()) as ClockStamps;
    const receivedEpochMs = this.settings.clock.nowEpochSeconds() * 1000;
    if (answer.statusCode !== 200) throw new ServelabError('UNREACHABLE', `${this.label} refused a clock exchange (HTTP ${answer.statusCode})`);
    if (stamps.clockAnchor !== undefined && stamps.clockAnchor === clockAnchorOf(this.settings.clock)) this.clock.sharesAnchor();
    this.clock.add(exchangeSample(sentEpochMs, stamps, receivedEpochMs));
  }

  /** Sends the start message (its slice and t0), already serialised. */
  async start(body: string): Promise<void> {
    const answer = await request(`${this.url}${GENERATOR_PATHS.start}`, {
      method: 'POST',
      headers: { ...controlTokenHeaders(this.settings.controlToken), 'content-type': 'application/json' },
      body,
      dispatcher: this.settings.dispatcher,
    });
    const text = await answer.body.text();
    if (answer.statusCode !== 202) throw new ServelabError('PROTOCOL_ERROR', `${this.label} refused its start message (HTTP ${answer.statusCode}: ${text.slice(0, 300)})`);
  }

  /** Asks the generator to stop sending; what it had in flight ends as `aborted` records on the stream. */
  async abort(): Promise<void> {
    const answer = await request(`${this.url}${GENERATOR_PATHS.abort}`, {
      method: 'POST',
      headers: controlTokenHeaders(this.settings.controlToken),
      dispatcher: this.settings.dispatcher,
      // A hung generator must not hold the interrupt up: the run gives it up after its grace period anyway.
      signal: AbortSignal.timeout(5_000),
    });
    await answer.body.dump();
  }

  /**
   * Follows the records stream until the generator says it is done (or failed), handing on each record and progress
   * report as it comes. A stream cut while the process still runs is taken up again where it stopped (`?from=`); a
   * stream cut because the process died, or given up through `signal` (the process ended and its last events had time
   * to arrive, or the run's teardown), ends as `lost`.
   */
  async followRecords(onRecord: (raw: RequestRecord) => void, onProgress: (progress: LoadProgress) => void, signal: AbortSignal): Promise<StreamEnd> {
    let reason = 'the records stream ended without its last event';
    for (let attempt = 0; attempt < 5 && !signal.aborted; attempt++) {
      try {
        const end = await this.#readStream(onRecord, onProgress, signal);
        if (end !== undefined) return end;
      } catch (error) {
        reason = signal.aborted ? 'the run stopped waiting for its records' : (error as Error).message;
      }
      if (this.process.hasExited || signal.aborted) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const exit = this.process.hasExited ? await this.process.exited : undefined;
    const how = exit === undefined ? '' : exit.signal !== null ? ` (killed by ${exit.signal})` : ` (exited with code ${exit.code ?? 'unknown'})`;
    return { kind: 'lost', reason: `${reason}${how}` };
  }

  async #readStream(onRecord: (raw: RequestRecord) => void, onProgress: (progress: LoadProgress) => void, signal: AbortSignal): Promise<StreamEnd | undefined> {
    const answer = await request(`${this.url}${GENERATOR_PATHS.records}?from=${this.rawRecords.length}`, {
      method: 'GET',
      signal,
      headers: controlTokenHeaders(this.settings.controlToken),
      dispatcher: this.settings.dispatcher,
    });
    if (answer.statusCode !== 200) {
      await answer.body.dump();
      throw new Error(`the records stream answered HTTP ${answer.statusCode}`);
    }
    let end: StreamEnd | undefined;
    const parser = new SseParser(
      (data, eventType) => {
        if (eventType === 'record') {
          const raw = JSON.parse(data) as RequestRecord;
          this.rawRecords.push(raw);
          onRecord(raw);
        } else if (eventType === 'progress') onProgress(JSON.parse(data) as LoadProgress);
        else if (eventType === 'done') end = { kind: 'done', done: JSON.parse(data) as GeneratorDone };
        else if (eventType === 'failed') end = { kind: 'failed', failed: JSON.parse(data) as GeneratorFailed };
      },
      { maxEventBytes: DEFAULT_MAX_SSE_EVENT_BYTES },
    );
    for await (const chunk of answer.body) {
      if (!parser.push(chunk as Buffer)) throw new Error('an event of the records stream was larger than the SSE limit');
    }
    return end;
  }

  stop(): Promise<void> {
    return this.process.stop();
  }
}
