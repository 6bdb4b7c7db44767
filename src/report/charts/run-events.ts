import type { Mark } from './chart-model.js';

/** A run event (a node failure, a restore) on the charts' time axis, in seconds after t0. */
export interface EventMark {
  time: number;
  label: string;
}

const EVENT_COLOUR = '#c0392b';

/** Dashed vertical rules with labels at the run's events, for any chart whose x axis is the run's time. */
export function eventMarks(events: readonly EventMark[]): Mark[] {
  if (events.length === 0) return [];
  return [{ kind: 'rule', axis: 'x', rules: events.map((event) => ({ value: event.time, colour: EVENT_COLOUR, label: event.label })), dashPx: [4, 3], strokeWidthPx: 1.5, labelPlacement: 'top' }];
}
