import type { NodeTestConfig } from '../config/schema.js';
import { resolveSchedulingPolicy } from '../engine/policy/load-policy.js';
import { loadProfile } from '../engine/profile/load-profile.js';

/**
 * Checks the simulated engine's profile and scheduling policy in servelab's own process before any server is
 * launched (the sim target's check): a bad profile or policy module then stops the run with the engine's own clear
 * message, instead of as a child process that died on start.
 */
export async function checkSimSettings(config: Pick<NodeTestConfig, 'profile' | 'schedulePolicy'>): Promise<void> {
  loadProfile(config.profile);
  await resolveSchedulingPolicy(config.schedulePolicy ?? 'fcfs');
}
