import type { NodeTestConfig } from '../config/schema.js';

type EngineConfigPart = Pick<NodeTestConfig, 'profile' | 'maxRunningRequests' | 'maxTotalTokens' | 'chunkedPrefillSize' | 'schedulePolicy' | 'scheduleConservativeness' | 'disableRadixCache' | 'enableMixedChunk' | 'pageSize'>;

/** The engine settings a test configuration gives every simulated server (real-time or virtual). */
export function simEngineSettings(config: EngineConfigPart) {
  return {
    profile: config.profile,
    maxRunningRequests: config.maxRunningRequests,
    maxTotalTokens: config.maxTotalTokens,
    chunkedPrefillSize: config.chunkedPrefillSize,
    schedulePolicy: config.schedulePolicy,
    scheduleConservativeness: config.scheduleConservativeness,
    disableRadixCache: config.disableRadixCache,
    enableMixedChunk: config.enableMixedChunk,
    pageSize: config.pageSize,
  };
}

/** The SGLang server settings of a test configuration, apart from where each server runs (port, GPUs, log). */
export function sglangServerSettings(config: NodeTestConfig) {
  return {
    ...simEngineSettings(config),
    modelPath: config.modelPath as string,
    tpSize: config.tpSize,
    memFractionStatic: config.memFractionStatic,
    enableTorchCompile: config.enableTorchCompile,
    quantization: config.quantization,
    extraServerArgs: config.extraServerArgs,
    pythonExecutable: config.pythonExecutable,
  };
}
