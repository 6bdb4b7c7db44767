import { ServelabError } from '../../errors/servelab-error.js';
import type { PlacedProcess } from '../../types/cluster.js';

const WILDCARD_OR_LOOPBACK = new Set(['0.0.0.0', '[::]', '127.0.0.1', 'localhost', '[::1]']);

/**
 * Where a placed process says it listens: the URL in the first group of the first output line matching `pattern`
 * (a program started on port 0 picks a free port and prints it, so no port is ever guessed). A wildcard or loopback
 * address in that line means the process's own host: it is replaced by the address others reach that host at, which
 * locally is the same loopback address, so a local URL comes back as printed.
 */
export async function listeningUrl(process: PlacedProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
  const [, printed] = await process.waitForLine(pattern, timeoutMs, 'start listening');
  if (printed === undefined) throw new ServelabError('INTERNAL', `${process.name} printed no URL`);
  const url = new URL(printed);
  if (WILDCARD_OR_LOOPBACK.has(url.hostname) && url.hostname !== process.host) {
    url.hostname = process.host.includes(':') ? `[${process.host}]` : process.host;
    return url.href.replace(/\/$/, '');
  }
  return printed;
}
