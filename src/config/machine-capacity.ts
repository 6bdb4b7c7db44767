import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { ServelabError } from '../errors/servelab-error.js';

/** The largest length of a JavaScript array: one element per request cannot go beyond it. */
const MAX_ARRAY_LENGTH = 2 ** 32 - 1;
/**
 * "Far beyond" the process can hold: the estimate below is generous (records stored compactly, or streamed to disk,
 * need less), so only settings this many times over the heap limit are refused before the run; anything nearer is
 * left to try.
 */
const REFUSAL_FACTOR = 4;
/**
 * Memory one simulated server takes: a Node process of its own with the engine loaded. One idle server shows 74 MB
 * RSS, much of it the Node binary's pages that all of them share; 600 of them took 18.1 GB (30 MB each). A server
 * holding requests takes more.
 */
export const SIM_SERVER_BYTES = 40 * 2 ** 20;

export interface CapacitySettings {
  numPrompts: number;
  datasetName: string;
  randomInputLen: number;
  randomOutputLen: number;
  warmupRequests?: number;
  gspNumGroups?: number;
  gspPromptsPerGroup?: number;
  gspNumTurns?: number;
  gspSystemPromptLen?: number;
  gspQuestionLen?: number;
  gspOutputLen?: number;
  gspZipfExponent?: number;
  concurrency?: number;
}

/** What a run of these settings holds in memory, and the settings that decide how much. */
interface RunSize {
  requests: number;
  bytes: number;
  /** The settings the size follows, as flags with their values ("--num-prompts 1000 + --warmup-requests 5"). */
  drivenBy: string;
}

/** Bytes one request costs besides its prompt: its record and workload entry (~1 KB) and its per-token gaps (8 bytes each). */
function perRequestBytes(outputTokens: number): number {
  return 1024 + 8 * outputTokens;
}

/** About 6 bytes of prompt text per token (a word and its space), or 8 per token id. */
const PROMPT_BYTES_PER_TOKEN = 6;

function sizeOf(settings: CapacitySettings): RunSize {
  const warmups = settings.warmupRequests ?? 0;
  if (settings.datasetName !== 'shared-prefix') {
    // Generated datasets draw warmups as extra requests; a file's warmups repeat its first requests (counted anyway:
    // the estimate may only err high).
    const requests = settings.numPrompts + warmups;
    return {
      requests,
      bytes: requests * (perRequestBytes(settings.randomOutputLen) + PROMPT_BYTES_PER_TOKEN * settings.randomInputLen),
      drivenBy: warmups > 0 ? `--num-prompts ${settings.numPrompts} + --warmup-requests ${warmups}` : `--num-prompts ${settings.numPrompts}`,
    };
  }
  // Shared prefix (SGLang's layout): groups x prompts per group conversations (numPrompts with servelab's Zipf
  // exponent), each of gspNumTurns turns; turn t's prompt is the system prompt and t questions, each turn a string of
  // its own. The system prompts are held once per group besides.
  const groups = settings.gspNumGroups ?? 64;
  const systemTokens = settings.gspSystemPromptLen ?? 2048;
  const questionTokens = settings.gspQuestionLen ?? 128;
  const turns = settings.gspNumTurns ?? 1;
  const byZipfExponent = settings.gspZipfExponent !== undefined;
  const conversations = byZipfExponent ? settings.numPrompts : groups * (settings.gspPromptsPerGroup ?? 16);
  const requests = conversations * turns;
  const promptTokensPerConversation = turns * systemTokens + (questionTokens * turns * (turns + 1)) / 2;
  const bytes =
    groups * systemTokens * PROMPT_BYTES_PER_TOKEN +
    requests * perRequestBytes(settings.gspOutputLen ?? 256) +
    conversations * promptTokensPerConversation * PROMPT_BYTES_PER_TOKEN;
  const conversationText = byZipfExponent ? `--num-prompts ${settings.numPrompts}` : `--gsp-num-groups ${groups} x --gsp-prompts-per-group ${settings.gspPromptsPerGroup ?? 16}`;
  return { requests, bytes, drivenBy: `${conversationText} x --gsp-num-turns ${turns} (--gsp-num-groups ${groups} system prompts of ${systemTokens} tokens)` };
}

/** Bytes a run of these settings holds in memory, roughly (see `sizeOf`). */
export function estimateRunBytes(settings: CapacitySettings): number {
  return sizeOf(settings).bytes;
}

function gib(value: number): string {
  return (value / 2 ** 30).toFixed(value < 10 * 2 ** 30 ? 1 : 0);
}

/**
 * Refuses, in one line naming the setting and the fix, settings far beyond what this process can hold: without this
 * check they end in a V8 abort ("Fatal JavaScript invalid size error", "heap out of memory") with no run directory
 * worth keeping, or in a minute of silence while the workload is drawn.
 */
export function checkMachineCapacity(settings: CapacitySettings, heapLimitBytes = getHeapStatistics().heap_size_limit): void {
  if (settings.numPrompts > MAX_ARRAY_LENGTH) {
    throw new ServelabError('INVALID_CONFIG', `numPrompts (--num-prompts) ${settings.numPrompts} is beyond the ${MAX_ARRAY_LENGTH} requests one run can hold; split the load into several runs`);
  }
  if (settings.concurrency !== undefined && settings.concurrency > MAX_ARRAY_LENGTH) {
    throw new ServelabError('INVALID_CONFIG', `concurrency (--concurrency) ${settings.concurrency} is beyond the ${MAX_ARRAY_LENGTH} users one run can hold`);
  }
  const size = sizeOf(settings);
  if (size.requests > MAX_ARRAY_LENGTH) {
    throw new ServelabError('INVALID_CONFIG', `${size.drivenBy} makes ${size.requests} requests, beyond the ${MAX_ARRAY_LENGTH} one run can hold; lower them or split the load into several runs`);
  }
  if (size.bytes > REFUSAL_FACTOR * heapLimitBytes) {
    const settingName = size.drivenBy.startsWith('--num-prompts') && !size.drivenBy.includes('+') ? 'numPrompts (--num-prompts)' : size.drivenBy;
    const text = settingName === 'numPrompts (--num-prompts)' ? `${settingName} ${settings.numPrompts} with these lengths` : `${settingName} with these lengths`;
    throw new ServelabError(
      'INVALID_CONFIG',
      `${text} needs about ${gib(size.bytes)} GiB of memory; this process may hold ${gib(heapLimitBytes)} GiB ` +
        '(the V8 heap limit): lower them, split the load into several runs, or raise the limit with NODE_OPTIONS=--max-old-space-size=<MiB>',
    );
  }
}

/**
 * Simulated servers one core carries. Each is a Node process of its own whose engine steps on timers and answers a
 * scrape every 0.5 s: 24 of them took about 6 s to get ready on a loaded 2-core machine, and 600 on 2 cores never
 * got through start-up in a usable time. A rule of thumb, stated in --help, not a measurement of this machine.
 */
export const SIM_SERVERS_PER_CORE = 16;
/**
 * File descriptors one simulated server costs servelab and its router: servelab holds the server's stdout and stderr
 * pipes, its log file and its scrape connection (4); the router (a child, under the same limit) pools its connections
 * to it. Counted as 8 for both.
 */
export const FDS_PER_SIM_SERVER = 8;
/** Descriptors kept for everything else: the client's connections, the run's files, the router's listening socket. */
export const FDS_RESERVED = 256;
/** Threads one simulated server runs (a Node process shows 11); `ulimit -u` counts threads, not processes, on Linux. */
export const THREADS_PER_SIM_SERVER = 12;

/** What this machine gives the run: memory, cores, and the soft limits (`ulimit -n`, `ulimit -u`) where known. */
export interface MachineResources {
  totalMemoryBytes: number;
  cores: number;
  /** `ulimit -n` (RLIMIT_NOFILE, soft); undefined when unlimited or not known. */
  openFilesLimit?: number;
  /** `ulimit -u` (RLIMIT_NPROC, soft); undefined when unlimited or not known. */
  processesLimit?: number;
}

/** This machine's resources; the limits are read from /proc/self/limits (Linux), and left unknown elsewhere. */
export function currentMachine(limitsText = readProcLimits()): MachineResources {
  const limits = parseSoftLimits(limitsText);
  return {
    totalMemoryBytes: totalmem(),
    cores: availableParallelism(),
    ...(limits.openFiles === undefined ? {} : { openFilesLimit: limits.openFiles }),
    ...(limits.processes === undefined ? {} : { processesLimit: limits.processes }),
  };
}

function readProcLimits(): string {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return '';
  }
}

/** The soft limits of `Max open files` and `Max processes` in /proc/self/limits ("unlimited" is left out). */
export function parseSoftLimits(text: string): { openFiles?: number; processes?: number } {
  const soft = (name: string): number | undefined => {
    const match = text.match(new RegExp(`^${name}\\s+(\\S+)`, 'm'));
    const value = match === null ? NaN : Number(match[1]);
    return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  };
  const openFiles = soft('Max open files');
  const processes = soft('Max processes');
  return { ...(openFiles === undefined ? {} : { openFiles }), ...(processes === undefined ? {} : { processes }) };
}

/** The most simulated servers each resource allows, with the line that names it. */
function serverBounds(numGpus: number, machine: MachineResources): { most: number; why: string }[] {
  const memoryMost = Math.max(1, Math.floor(machine.totalMemoryBytes / SIM_SERVER_BYTES));
  const bounds = [
    {
      most: memoryMost,
      why: `need about ${gib(numGpus * SIM_SERVER_BYTES)} GiB (${SIM_SERVER_BYTES / 2 ** 20} MiB each); this machine has ${gib(machine.totalMemoryBytes)} GiB, enough for at most ${memoryMost}`,
    },
    {
      most: Math.max(1, machine.cores * SIM_SERVERS_PER_CORE),
      why: `need more CPU than this machine's ${machine.cores} cores give: at most ${Math.max(1, machine.cores * SIM_SERVERS_PER_CORE)} (${SIM_SERVERS_PER_CORE} per core)`,
    },
  ];
  if (machine.openFilesLimit !== undefined) {
    const most = Math.max(1, Math.floor((machine.openFilesLimit - FDS_RESERVED) / FDS_PER_SIM_SERVER));
    bounds.push({
      most,
      why: `need about ${numGpus * FDS_PER_SIM_SERVER + FDS_RESERVED} file descriptors (${FDS_PER_SIM_SERVER} each, ${FDS_RESERVED} for the rest); the open-files limit (ulimit -n) is ${machine.openFilesLimit}, enough for at most ${most} (raise it with ulimit -n)`,
    });
  }
  if (machine.processesLimit !== undefined) {
    const most = Math.max(1, Math.floor(machine.processesLimit / THREADS_PER_SIM_SERVER));
    bounds.push({
      most,
      why: `need about ${numGpus * THREADS_PER_SIM_SERVER} threads (${THREADS_PER_SIM_SERVER} each); the process limit (ulimit -u) is ${machine.processesLimit}, enough for at most ${most} (raise it with ulimit -u)`,
    });
  }
  return bounds;
}

/**
 * Refuses more simulated servers than this machine carries: each is a process of its own, and without this check
 * `--num-gpus 100000` started hundreds of them (18 GB of 24) before anything failed. The tightest of four bounds
 * decides, and the line names it: memory (SIM_SERVER_BYTES each), CPU (SIM_SERVERS_PER_CORE per core), file
 * descriptors (`ulimit -n`) and threads (`ulimit -u`). Real SGLang servers are not counted here: their GPUs, not this
 * host, bound them, and the launch fails on the first missing one.
 */
export function checkServerCount(numGpus: number, target: string, machine: MachineResources = currentMachine()): void {
  if (target !== 'sim') return;
  const tightest = serverBounds(numGpus, machine).reduce((best, bound) => (bound.most < best.most ? bound : best));
  if (numGpus > tightest.most) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `numGpus (--num-gpus) ${numGpus} simulated servers ${tightest.why}: lower --num-gpus, or simulate more with --virtual-time (no processes)`,
    );
  }
}

/** Memory one load-generator thread takes: a V8 isolate of its own with the client loaded (about 20-30 MB). */
export const CLIENT_WORKER_BYTES = 32 * 2 ** 20;

/**
 * Refuses more load-generator threads (`--client-workers`) than this machine's memory holds: each is a V8 isolate of
 * its own, started before the first request.
 */
export function checkClientWorkers(clientWorkers: number, totalMemoryBytes = totalmem()): void {
  const most = Math.max(1, Math.floor(totalMemoryBytes / CLIENT_WORKER_BYTES));
  if (clientWorkers > most) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `clientWorkers (--client-workers) ${clientWorkers} threads need about ${gib(clientWorkers * CLIENT_WORKER_BYTES)} GiB (${CLIENT_WORKER_BYTES / 2 ** 20} MiB each); this machine has ${gib(totalMemoryBytes)} GiB, enough for at most ${most}: give about one per core`,
    );
  }
}
