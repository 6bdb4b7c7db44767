/** The simulated SGLang engine: what the orchestration layer and the library facade use. */
export { startSimServer } from './http/start-sim-server.js';
export type { RunningSimServer, SimServerOptions } from './http/start-sim-server.js';
export { VirtualTimeSimulator } from './virtual/virtual-time-simulator.js';
export type { VirtualEngineEvents, VirtualTimeSimulatorOptions } from './virtual/virtual-time-simulator.js';
export { createEngine, resolveEngineSetup, ENGINE_DEFAULTS } from './create-engine.js';
export type { EngineSettings, ResolvedEngineSetup } from './create-engine.js';
export { SimEngine } from './core/sim-engine.js';
export type { StepPlan } from './core/sim-engine.js';
export { loadProfile, builtinProfileNames, DEFAULT_PROFILE_NAME } from './profile/load-profile.js';
export { costModelFor } from './profile/cost-model.js';
export { resolveSchedulingPolicy } from './policy/load-policy.js';
export { BUILTIN_SCHEDULING_POLICIES } from './policy/builtin-policies.js';
export { calibrateProfile } from './calibration/calibrate-profile.js';
export type { CalibrationResult } from './calibration/calibrate-profile.js';
export type { CalibrationOptions } from './calibration/measure-server.js';
