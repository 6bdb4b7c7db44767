import { ManualClock } from '../../../src/clock/clock.js';
import type { ScriptStep } from './scripted-server.js';

/**
 * A ManualClock that counts how often the client read it, so a scripted server can wait until the client has stamped
 * one chunk before it moves the clock for the next — deterministic however loaded the machine is.
 */
export class ObservedClock extends ManualClock {
  reads = 0;

  override nowMs(): number {
    this.reads++;
    return super.nowMs();
  }
}

/** Script steps: write `bytes`, then wait until the client has read the clock for them (at most 5 s). */
export function writeAndAwaitRead(clock: ObservedClock, bytes: string | Buffer): ScriptStep[] {
  let readsBefore = 0;
  return [
    {
      run: () => {
        readsBefore = clock.reads;
      },
    },
    { write: bytes },
    { until: () => clock.reads > readsBefore },
  ];
}
