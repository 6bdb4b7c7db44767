import type { EngineProfile } from '../../types/engine.js';

/** The run's own scheduler settings, where it gave any (undefined: take the profile's). */
export interface SchedulingSettings {
  enableMixedChunk?: boolean;
  chunkedPrefillSize?: number;
  maxRunningRequests?: number;
  maxTotalTokens?: number;
  pageSize?: number;
}

/**
 * The settings of a run that contradict how its profile's server was found to schedule, one sentence naming them, or
 * null when none do (or the profile records no scheduling). A twin told to schedule otherwise than the server it
 * stands for predicts another server: on a mixing engine, SGLang's default scheduling had put TPOT 22-38% high.
 */
export function schedulingContradictionNotice(profile: EngineProfile, settings: SchedulingSettings): string | null {
  if (profile.kind === 'simple' || profile.scheduling === undefined) return null;
  const scheduling = profile.scheduling;
  const contradictions: string[] = [];
  if (settings.enableMixedChunk !== undefined && settings.enableMixedChunk !== scheduling.mixedChunk) {
    contradictions.push(
      `--enable-mixed-chunk is ${settings.enableMixedChunk ? 'on' : 'off'} but the profile's server ${scheduling.mixedChunk ? 'mixes prefill chunks into decode steps' : 'runs prefill steps apart from decode steps'}`,
    );
  }
  const limits = [
    ['--chunked-prefill-size', settings.chunkedPrefillSize, scheduling.chunkedPrefillSize],
    ['--max-running-requests', settings.maxRunningRequests, scheduling.maxRunningRequests],
    ['--max-total-tokens', settings.maxTotalTokens, scheduling.maxTotalTokens],
    ['--page-size', settings.pageSize, scheduling.pageSize],
  ] as const;
  for (const [flag, given, server] of limits) {
    if (given !== undefined && server !== undefined && given !== server) contradictions.push(`${flag} is ${given} but the profile's server has ${server}`);
  }
  if (contradictions.length === 0) return null;
  return (
    `scheduling: ${contradictions.join('; ')} (profile ${profile.name}, ${scheduling.source === 'server_info' ? "limits from the server's /server_info" : 'limits probed'}); ` +
    'the twin follows the run\'s settings, so it models another server than the one calibrated: leave these flags out to schedule as the profile says'
  );
}
