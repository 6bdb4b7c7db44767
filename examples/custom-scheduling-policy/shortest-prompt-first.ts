/**
 * A custom waiting-queue policy for the simulated SGLang engine: shortest prompt first (after what is already cached),
 * which trades fairness for lower mean time to first token.
 *
 *   npm run build
 *   servelab sim-server --port 30000 --schedule-policy dist/examples/custom-scheduling-policy/shortest-prompt-first.js
 *
 * A policy module's default export (or an export named `policy`) is a SchedulingPolicy, or a function returning one.
 * Before each prefill admission the engine calls `order(waiting, context)`, which must sort `waiting` in place; the
 * engine then admits from the front while running slots, the prefill budget and KV room allow.
 */
import type { EngineRequestView, SchedulingContext, SchedulingPolicy } from 'servelab';

const shortestPromptFirst: SchedulingPolicy = {
  name: 'shortest-prompt-first',
  order(waiting: EngineRequestView[], context: SchedulingContext): void {
    // Work left to prefill: prompt tokens minus those the radix cache already holds. Ties keep arrival order.
    const work = new Map<EngineRequestView, number>();
    for (const request of waiting) work.set(request, request.promptLength - context.prefixLength(request));
    waiting.sort((left, right) => (work.get(left) as number) - (work.get(right) as number) || left.serial - right.serial);
  },
};

export default shortestPromptFirst;
