import type { SchedulingPolicy } from '../../types/engine.js';
import { fcfsPolicy } from './fcfs.js';
import { lpmPolicy } from './lpm.js';

/** Built-in waiting-queue policies by name; any other name is loaded as a module path (see load-policy.ts). */
export const BUILTIN_SCHEDULING_POLICIES: Readonly<Record<string, SchedulingPolicy>> = {
  fcfs: fcfsPolicy,
  lpm: lpmPolicy,
};
