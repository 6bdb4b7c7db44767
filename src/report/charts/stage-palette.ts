import type { Legend } from './chart-model.js';

/**
 * One colour per lifecycle stage, for every chart that shows stages (lifecycle breakdown, request timeline, concurrency
 * over time), so that a stage reads the same everywhere. The names of a stage differ by chart (a timeline bar
 * "waiting on server" is the concurrency series `waiting_in_server_queue`); each gets the same colour.
 */
const STAGE_COLOURS: Readonly<Record<string, string>> = {
  in_system: '#7f7f7f',
  'router queue': '#9467bd',
  in_router: '#9467bd',
  network: '#8c564b',
  tokenize: '#e377c2',
  'server queue': '#ff7f0e',
  'waiting on server': '#ff7f0e',
  waiting_in_server_queue: '#ff7f0e',
  prefill: '#2ca02c',
  running: '#2ca02c',
  // Prefill/decode runs: the prefill half's stages and the decode server's first step.
  'prefill server queue': '#ffbb78',
  'KV transfer': '#8c6d31',
  'handshake and hops between servers': '#c5b0d5',
  'first decode step': '#98df8a',
  'first token to client': '#17becf',
  'until first token': '#bcbd22',
  decode: '#1f77b4',
  failed: '#d62728',
};

const UNLISTED = '#aaaaaa';

/** The colour of a stage label; a qualifier in parentheses (`failed (http_5xx)`, `tokenize (not modelled ...)`) is ignored. */
export function stageColour(label: string): string {
  return STAGE_COLOURS[label.replace(/ \(.*\)$/, '')] ?? UNLISTED;
}

/** A legend giving each stage label present its palette colour, in the order given (each label once). */
export function stageLegend(title: string, labels: readonly string[]): Legend {
  return { title, entries: [...new Set(labels)].map((label) => ({ label, colour: stageColour(label), symbol: 'square' })) };
}
