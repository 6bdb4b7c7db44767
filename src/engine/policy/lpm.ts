import type { EngineRequestView, SchedulingContext, SchedulingPolicy } from '../../types/engine.js';

/**
 * SGLang's queue length above which `lpm` falls back to fcfs, because matching every waiting request against the radix
 * tree each step costs too much on long queues.
 */
export const LPM_FALLBACK_QUEUE_LENGTH = 128;

/** Longest prefix match: requests with the most cached prompt tokens first (ties keep queue order). */
export const lpmPolicy: SchedulingPolicy = {
  name: 'lpm',
  order(waiting: EngineRequestView[], context: SchedulingContext) {
    if (waiting.length > LPM_FALLBACK_QUEUE_LENGTH || waiting.length < 2) return;
    const keyed = waiting.map((request, position) => ({ request, position, length: context.prefixLength(request) }));
    keyed.sort((left, right) => right.length - left.length || left.position - right.position);
    for (let index = 0; index < keyed.length; index++) waiting[index] = (keyed[index] as (typeof keyed)[number]).request;
  },
};
