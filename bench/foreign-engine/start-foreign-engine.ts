import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ForeignEngine {
  url: string;
  process: ChildProcess;
  /** Stops the engine (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts the foreign engine (python3, standard library only) on a free loopback port and resolves once it serves:
 * its first line names the port. `args` are engine.py's flags (limits, step-time law, jitter).
 */
export function startForeignEngine(args: string[] = [], python = 'python3'): Promise<ForeignEngine> {
  const child = spawn(python, [scriptPath(), '--host', '127.0.0.1', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match === null) reject(new Error(`the foreign engine said "${line}" instead of its address`));
      else resolve({ url: match[1] as string, process: child, stop });
    });
    child.once('exit', (code) => reject(new Error(`the foreign engine exited with ${code} before serving: ${stderr.trim()}`)));
    child.once('error', reject);
  });
}

/** engine.py beside this file's source (the build puts this module under dist/, the script stays in bench/). */
function scriptPath(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return here.includes('/dist/bench/') ? here.replace('/dist/bench/', '/bench/') + 'engine.py' : `${here}engine.py`;
}
