import { ServelabError } from '../errors/servelab-error.js';
import type { CostModel, EngineConfig, EngineListener, EngineProfile, SchedulingPolicy } from '../types/engine.js';
import { roleKeepsRadixCache } from './disaggregation/engine-role.js';
import type { EngineRole } from './disaggregation/engine-role.js';
import { DisabledPrefixCache } from './core/prefix-cache.js';
import type { PrefixCache } from './core/prefix-cache.js';
import { RadixCache } from './core/radix-cache.js';
import { SimEngine } from './core/sim-engine.js';
import { BUILTIN_SCHEDULING_POLICIES } from './policy/builtin-policies.js';
import { costModelFor } from './profile/cost-model.js';
import { loadProfile } from './profile/load-profile.js';
import { sglangGpuMemoryDefaults } from './profile/sglang-gpu-memory.js';

/** Settings for one simulated engine; anything left out takes the default below or the profile's value. */
export interface EngineSettings {
  /** Built-in profile name, path to a profile JSON file, inline JSON, or a profile object. */
  profile?: string | EngineProfile;
  maxRunningRequests?: number;
  chunkedPrefillSize?: number;
  maxTotalTokens?: number;
  contextLength?: number;
  /** `fcfs`, `lpm`, or a policy object (custom module paths are resolved by resolveSchedulingPolicy first). */
  schedulePolicy?: string | SchedulingPolicy;
  scheduleConservativeness?: number;
  disableRadixCache?: boolean;
  /** SGLang's --enable-mixed-chunk (default off, as in SGLang). */
  enableMixedChunk?: boolean;
  /** SGLang's --page-size: KV tokens per page (default: a calibrated profile's, else 1 as in SGLang). */
  pageSize?: number;
  seed?: number;
  /**
   * Prefill/decode disaggregation (SGLang's --disaggregation-mode): default `colocated`, the engine as it always was. A
   * `decode` server keeps no radix cache (src/engine/disaggregation/engine-role.ts).
   */
  role?: EngineRole;
}

export const ENGINE_DEFAULTS = {
  /** SGLang sizes this from GPU memory; 256 is a typical cap for an 8B model's CUDA-graph batch sizes. */
  maxRunningRequests: 256,
  /** SGLang's default on 80 GB GPUs. */
  chunkedPrefillSize: 8192,
  scheduleConservativeness: 1.0,
  seed: 0,
  /** For `simple` profiles without their own figures. */
  simpleMaxTotalTokens: 500_000,
  simpleContextLength: 32_768,
} as const;

export interface ResolvedEngineSetup {
  profile: EngineProfile;
  config: EngineConfig;
  policy: SchedulingPolicy;
}

export function resolveEngineSetup(settings: EngineSettings = {}): ResolvedEngineSetup {
  const profile = loadProfile(settings.profile);
  const profileTotal = profile.kind === 'roofline' ? profile.maxTotalTokens : profile.maxTotalTokens;
  const profileContext = profile.kind === 'roofline' ? profile.contextLength : profile.contextLength;
  const policySetting = settings.schedulePolicy ?? 'fcfs';
  let policy: SchedulingPolicy;
  if (typeof policySetting === 'string') {
    const builtin = BUILTIN_SCHEDULING_POLICIES[policySetting];
    if (builtin === undefined) {
      throw new ServelabError(
        'INVALID_CONFIG',
        `schedule policy "${policySetting}" is not built in (fcfs, lpm); load a custom policy module with ` +
          'resolveSchedulingPolicy before creating the engine',
      );
    }
    policy = builtin;
  } else {
    policy = policySetting;
  }
  // A calibrated profile says how its server schedules (src/engine/calibration/identify-scheduling.ts): a setting left
  // out takes the server's own value, so the twin schedules as the server did without the user repeating its flags.
  const scheduling = profile.kind === 'simple' ? undefined : profile.scheduling;
  const config: EngineConfig = {
    maxRunningRequests: settings.maxRunningRequests ?? scheduling?.maxRunningRequests ?? ENGINE_DEFAULTS.maxRunningRequests,
    // Without a setting, SGLang's automatic chunk size for the profile's GPU (8192 on H100/H200, 2048 below 35 GiB).
    chunkedPrefillSize:
      settings.chunkedPrefillSize ??
      scheduling?.chunkedPrefillSize ??
      (profile.kind === 'roofline' && profile.gpuMemoryMiB !== undefined
        ? sglangGpuMemoryDefaults(profile.gpuMemoryMiB, profile.tpSize ?? 1).chunkedPrefillSize
        : ENGINE_DEFAULTS.chunkedPrefillSize),
    maxTotalTokens: settings.maxTotalTokens ?? scheduling?.maxTotalTokens ?? profileTotal ?? ENGINE_DEFAULTS.simpleMaxTotalTokens,
    contextLength: settings.contextLength ?? profileContext ?? ENGINE_DEFAULTS.simpleContextLength,
    schedulePolicy: policy.name,
    scheduleConservativeness: settings.scheduleConservativeness ?? ENGINE_DEFAULTS.scheduleConservativeness,
    disableRadixCache: (settings.disableRadixCache ?? false) || !roleKeepsRadixCache(settings.role ?? 'colocated'),
    enableMixedChunk: settings.enableMixedChunk ?? scheduling?.mixedChunk ?? false,
    pageSize: settings.pageSize ?? scheduling?.pageSize ?? 1,
    seed: settings.seed ?? ENGINE_DEFAULTS.seed,
  };
  refuseChunkOffPages(config, settings.role ?? 'colocated');
  return { profile, config, policy };
}

/**
 * SGLang refuses to start with a chunk size that is not whole pages, except on a PD decode server, which prefills
 * nothing (python/sglang/srt/server_args.py, check_server_args: "chunked_prefill_size must be divisible by
 * page_size"). A bad page size itself is left to the engine's own check, which names it.
 */
function refuseChunkOffPages(config: EngineConfig, role: EngineRole): void {
  const { chunkedPrefillSize, pageSize } = config;
  if (role === 'decode' || chunkedPrefillSize <= 0 || !Number.isInteger(pageSize) || pageSize <= 0) return;
  if (chunkedPrefillSize % pageSize === 0) return;
  const lower = Math.floor(chunkedPrefillSize / pageSize) * pageSize;
  throw new ServelabError(
    'INVALID_CONFIG',
    `chunkedPrefillSize ${chunkedPrefillSize} is not a multiple of pageSize ${pageSize}, which SGLang refuses at start-up ` +
      `(server_args.py check_server_args); set --chunked-prefill-size to a multiple of ${pageSize}, e.g. ${lower > 0 ? lower : pageSize}`,
  );
}

export function createPrefixCache(config: EngineConfig): PrefixCache {
  return config.disableRadixCache ? new DisabledPrefixCache() : new RadixCache(config.pageSize);
}

export function createEngine(setup: ResolvedEngineSetup, listener: EngineListener, costModel: CostModel = costModelFor(setup.profile)): SimEngine {
  return new SimEngine({
    config: setup.config,
    costModel,
    policy: setup.policy,
    prefixCache: createPrefixCache(setup.config),
    listener,
  });
}
