import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../clock/clock.js';
import type { TapRecord } from '../../types/routing.js';
import { serveTapRecords } from '../tap/serve-tap-records.js';

/**
 * The builtin router's own tracing: for every attempt to hand a request to a worker, the instant it does so
 * (`routerSendTime`, on the router's clock) and the worker, kept in the tracing taps' record format and served at the
 * taps' path, so a run collects and joins them exactly as it does the taps'. For the router servelab owns this
 * replaces a tap process in front of every server: no second relay per request, no extra process on the machine.
 * Unlike a tap, which stamps a request when it has crossed the router-to-tap hop, the router stamps it as it sends.
 */
export class RouterTrace {
  readonly #clock: Clock;
  #records: TapRecord[] = [];

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Called right before an attempt is forwarded to a worker; the caller fills `httpStatus` when it answers. */
  record(requestId: string, host: string, hostIndex: number): TapRecord {
    const record: TapRecord = { requestId, routerSendTime: this.#clock.nowEpochSeconds(), host, hostIndex };
    this.#records.push(record);
    return record;
  }

  /** The taps' records endpoint, without an overhead: there is no extra hop to measure. */
  serve(incoming: IncomingMessage, response: ServerResponse): void {
    serveTapRecords(incoming, response, this.#records, () => {
      this.#records = [];
    });
  }
}
