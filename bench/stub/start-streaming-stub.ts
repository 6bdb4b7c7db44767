import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Starts the minimal streaming stub (streaming-stub.ts) in a child process, pinned to CPU 1 when asked. With
 * `arrivalsFile`, the stub writes there the instants at which it saw each measured request once its stdin is closed
 * (see `stopStreamingStub`).
 */
export async function startStreamingStub(pinned: boolean, arrivalsFile?: string): Promise<{ child: ChildProcess; baseUrl: string }> {
  const stubPath = fileURLToPath(new URL('./streaming-stub.js', import.meta.url));
  const command = pinned ? 'taskset' : process.execPath;
  const args = pinned ? ['-c', '1', process.execPath, stubPath] : [stubPath];
  const env = arrivalsFile === undefined ? process.env : { ...process.env, STUB_ARRIVALS_FILE: arrivalsFile };
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], env });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (data: Buffer) => {
      output += data.toString();
      const match = /PORT (\d+)/.exec(output);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the stub exited with code ${code}`)));
  });
  return { child, baseUrl: `http://127.0.0.1:${port}` };
}

/** Closes the stub's stdin and waits for it to exit (it writes its arrivals file first). */
export async function stopStreamingStub(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin?.end();
  const timer = setTimeout(() => child.kill(), 10_000);
  await exited;
  clearTimeout(timer);
}
