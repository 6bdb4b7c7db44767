export { startRouter, DEFAULT_MAX_RETRIES, RETRIES_HEADER, type RouterHandle, type RouterOptions } from './start-router.js';
export type { WorkerSnapshot } from './router-worker.js';
export { parseLoad } from './worker-monitor.js';
