import { hostname } from 'node:os';
import { ServelabError } from '../../../errors/servelab-error.js';
import type { PlacedProcess, PlacementRequest, ProcessExit, ProcessPlacement } from '../../../types/cluster.js';
import { assertPortFree, findFreePort } from '../../ports.js';
import { childEnv } from '../../process/child-env.js';
import { SupervisedProcess } from '../../process/supervised-process.js';

/** The loopback address every local process listens on: servelab never exposes what it launches beyond this host. */
const LOCAL_HOST = '127.0.0.1';

/**
 * This host's processes, each in its own process group (SupervisedProcess): stopping one stops everything it started,
 * and the watchdog stops the groups if servelab itself dies. The one node is this host, named `localhost`, `local`,
 * `127.0.0.1` or by its host name.
 */
export class LocalPlacement implements ProcessPlacement {
  readonly name = 'local';

  spawn(request: PlacementRequest): PlacedProcess {
    checkNode(request.node);
    const child = new SupervisedProcess({
      name: request.name,
      command: request.command,
      args: request.args,
      // Never the API key: see childEnv.
      env: childEnv(request.env ?? {}),
      logPath: request.logPath,
      ...(request.stopGraceMs === undefined ? {} : { stopGraceMs: request.stopGraceMs }),
    });
    return new LocalProcess(child);
  }

  freePort(node?: string): Promise<number> {
    checkNode(node);
    return findFreePort(LOCAL_HOST);
  }

  assertPortFree(port: number, flag: string, node?: string): Promise<void> {
    checkNode(node);
    return assertPortFree(port, flag, LOCAL_HOST);
  }

  hostOf(node?: string): string {
    checkNode(node);
    return LOCAL_HOST;
  }
}

/** The placement every launcher uses unless it is given another. */
export const localPlacement: ProcessPlacement = new LocalPlacement();

function checkNode(node: string | undefined): void {
  if (node === undefined) return;
  if (['localhost', 'local', LOCAL_HOST, hostname()].includes(node)) return;
  throw new ServelabError('INVALID_CONFIG', `the local placement runs processes on this host (${hostname()}) only, not on node "${node}"; drop the node, or use a placement that reaches it`);
}

/** A SupervisedProcess seen through the placement interface; the process-group guarantees are SupervisedProcess's. */
class LocalProcess implements PlacedProcess {
  readonly host = LOCAL_HOST;
  readonly exited: Promise<ProcessExit>;

  constructor(private readonly child: SupervisedProcess) {
    this.exited = child.exited;
  }

  get name(): string {
    return this.child.name;
  }

  get id(): string {
    return `pid ${this.child.pid ?? 'none'}`;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get logPath(): string | undefined {
    return this.child.logPath;
  }

  get hasExited(): boolean {
    return this.child.hasExited;
  }

  logTail(): string {
    return this.child.tail.text();
  }

  waitForLine(pattern: RegExp, timeoutMs: number, what: string): Promise<RegExpMatchArray> {
    return this.child.waitForLine(pattern, timeoutMs, what);
  }

  exitFailure(what: string): Error {
    return this.child.exitFailure(what);
  }

  failure(code: 'NOT_READY' | 'PROCESS_EXITED', message: string): Error {
    return this.child.failure(code, message);
  }

  signal(signal: NodeJS.Signals): void {
    this.child.signal(signal);
  }

  stop(): Promise<void> {
    return this.child.stop();
  }
}
