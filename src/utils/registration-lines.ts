import type { Readable } from 'node:stream';

/** What a pipe watchdog is told of one thing it watches: `+ID` registers it, `-ID` drops it. */
export interface RegistrationListener {
  register(id: string): void;
  unregister(id: string): void;
}

/**
 * Reads the lines servelab writes to its pipe watchdogs (the process-group watchdog, src/cluster/process/watchdog.ts,
 * and the Slurm job one, src/cluster/slurm-jobs/job-watchdog.ts): one `+ID` or `-ID` a line. A line can arrive split
 * across chunks, so a partial last line waits for the rest. The id is handed on as written: each watchdog decides
 * which ids it accepts. A line that starts with neither sign is passed over.
 */
export function readRegistrationLines(input: Readable, listener: RegistrationListener): void {
  let buffered = '';
  input.setEncoding('utf8');
  input.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('+')) listener.register(line.slice(1));
      else if (line.startsWith('-')) listener.unregister(line.slice(1));
    }
  });
}
