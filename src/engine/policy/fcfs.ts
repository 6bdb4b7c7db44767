import type { SchedulingPolicy } from '../../types/engine.js';

/** First come, first served: the queue keeps its order (arrivals appended, retracted requests appended again). */
export const fcfsPolicy: SchedulingPolicy = {
  name: 'fcfs',
  order() {},
};
