import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

/** A loopback port with nothing listening: bind one, note it, close it. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface BlackholeListener {
  url: string;
  close(): Promise<void>;
}

/**
 * A loopback address where TCP connects hang: a child process listens with a backlog of 1 and stops itself
 * (SIGSTOP), so it never accepts; filler connections then fill the kernel's accept queue, after which Linux drops new
 * SYNs and a connect neither succeeds nor fails until the client gives up.
 */
export async function startBlackholeListener(): Promise<BlackholeListener> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '-e',
      "const s=require('net').createServer();s.listen({port:0,host:'127.0.0.1',backlog:1},()=>{" +
        "process.stdout.write(String(s.address().port)+'\\n',()=>process.kill(process.pid,'SIGSTOP'));});",
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (data: Buffer) => resolve(Number.parseInt(data.toString('utf8'), 10)));
    child.once('error', reject);
  });
  const fillers: Socket[] = [];
  // Fill the accept queue: keep connecting until one connect does not complete promptly.
  for (let attempt = 0; attempt < 8; attempt++) {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.on('error', () => undefined);
    fillers.push(socket);
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 200);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!connected) break;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of fillers) socket.destroy();
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** A raw TCP server that answers every connection with bytes that are not HTTP. */
export async function startGarbageServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => socket.write('THIS IS NOT HTTP\r\n\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
