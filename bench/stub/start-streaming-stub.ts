import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Starts the minimal streaming stub (streaming-stub.ts) in a child process, pinned to CPU 1 when asked. */
export async function startStreamingStub(pinned: boolean): Promise<{ child: ChildProcess; baseUrl: string }> {
  const stubPath = fileURLToPath(new URL('./streaming-stub.js', import.meta.url));
  const command = pinned ? 'taskset' : process.execPath;
  const args = pinned ? ['-c', '1', process.execPath, stubPath] : [stubPath];
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
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
