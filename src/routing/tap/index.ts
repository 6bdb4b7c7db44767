export { startTaps, TAP_RECORDS_PATH, type TapsHandle, type TapsOptions, type TapRecordsResponse } from './start-taps.js';
export { fetchTapRecords, clearTapRecords } from './tap-records-client.js';
export { summarizeDurations } from './duration-summary.js';
