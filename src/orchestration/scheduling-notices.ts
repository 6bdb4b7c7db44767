import type { NodeTestConfig } from '../config/schema.js';
import { loadProfile } from '../engine/profile/load-profile.js';
import { schedulingContradictionNotice } from '../engine/profile/scheduling-notice.js';

/**
 * A real-time run on the simulated engine: the run's scheduler settings that contradict its calibrated profile's
 * (src/engine/profile/scheduling-notice.ts), as a notice; none for other targets, whose scheduling is their own.
 */
export function simSchedulingNotices(config: Pick<NodeTestConfig, 'target' | 'profile' | 'enableMixedChunk' | 'chunkedPrefillSize' | 'maxRunningRequests' | 'maxTotalTokens' | 'pageSize'>): string[] {
  if (config.target !== 'sim') return [];
  const notice = schedulingContradictionNotice(loadProfile(config.profile), config);
  return notice === null ? [] : [notice];
}
