/**
 * A zero-work streaming server for the load generator's benchmarks, run as a child process so that it never competes
 * with the load generator's event loop. It answers every HTTP/1.1 POST (the path is not checked) with an SGLang
 * `/generate`-style event stream of STUB_TOKENS events (default 16), STUB_EVENTS_PER_WRITE of them (default 4) per
 * turn of its event loop, then `[DONE]`: fewer writes keep the stub far cheaper than the client it serves, so that
 * the benchmark measures the load generator and not the stub; STUB_EVENTS_PER_WRITE=1 streams one event per write. It parses just enough HTTP to find where each request ends; connections stay open (keep-alive).
 * Prints `PORT <number>` on stdout once it listens; exits when stdin closes (so it never outlives the benchmark).
 *
 * It is also the server-side witness of the arrival process: with STUB_ARRIVALS_FILE set, it notes the instant (epoch
 * milliseconds, from this process's clock) at which each request's last byte arrived, leaving out servelab's warmup
 * requests (their ids contain `warmup`), and writes them there, one per line, when stdin closes; the instant its last
 * answer ended goes on a line of its own, `END <ms>`. A GET (health checks, /metrics scrapes) gets an empty 200.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

const TOKEN_COUNT = Number(process.env['STUB_TOKENS'] ?? 16);
const EVENTS_PER_WRITE = Math.max(1, Number(process.env['STUB_EVENTS_PER_WRITE'] ?? 4));
const ARRIVALS_FILE = process.env['STUB_ARRIVALS_FILE'];
const HEADER_END = Buffer.from('\r\n\r\n');
const EMPTY_OK = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
/** Epoch milliseconds at which each measured request arrived (grown by doubling: no per-request allocation). */
let arrivalsMs = new Float64Array(1 << 16);
let arrivalCount = 0;
let lastAnswerEndMs = Number.NaN;

function epochNowMs(): number {
  return performance.timeOrigin + performance.now();
}

function noteArrival(request: Buffer): void {
  if (ARRIVALS_FILE === undefined || request.includes('warmup')) return;
  if (arrivalCount === arrivalsMs.length) {
    const grown = new Float64Array(arrivalsMs.length * 2);
    grown.set(arrivalsMs);
    arrivalsMs = grown;
  }
  arrivalsMs[arrivalCount++] = epochNowMs();
}
const RESPONSE_HEAD = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n',
);

function asChunk(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n')]);
}

/** Every event but the request id is the same for all requests, so the events are built once. */
function buildEvents(): Buffer[] {
  const built: Buffer[] = [];
  let text = '';
  for (let token = 1; token <= TOKEN_COUNT; token++) {
    text += ` w${token}`;
    const finished = token === TOKEN_COUNT;
    const metaInfo: Record<string, unknown> = {
      id: 'stub',
      finish_reason: finished ? { type: 'length', length: TOKEN_COUNT } : null,
      prompt_tokens: 32,
      completion_tokens: token,
      cached_tokens: 0,
    };
    if (finished) metaInfo['e2e_latency'] = 0.001;
    built.push(asChunk(`data: ${JSON.stringify({ text, meta_info: metaInfo })}\n\n`));
  }
  built.push(Buffer.concat([asChunk('data: [DONE]\n\n'), Buffer.from('0\r\n\r\n')]));
  const grouped: Buffer[] = [];
  for (let index = 0; index < built.length; index += EVENTS_PER_WRITE) grouped.push(Buffer.concat(built.slice(index, index + EVENTS_PER_WRITE)));
  return grouped;
}

const events = buildEvents();

interface OpenStream {
  socket: Socket;
  nextEvent: number;
}

let streams: OpenStream[] = [];
let pumpScheduled = false;

/** Writes the next event of every open stream, then comes back on the next turn while any stream is unfinished. */
function pump(): void {
  pumpScheduled = false;
  const stillOpen: OpenStream[] = [];
  for (const stream of streams) {
    if (stream.socket.destroyed) continue;
    stream.socket.write(events[stream.nextEvent] as Buffer);
    stream.nextEvent++;
    if (stream.nextEvent < events.length) stillOpen.push(stream);
    else lastAnswerEndMs = epochNowMs();
  }
  streams = stillOpen;
  schedulePump();
}

function schedulePump(): void {
  if (!pumpScheduled && streams.length > 0) {
    pumpScheduled = true;
    setImmediate(pump);
  }
}

function contentLength(head: string): number {
  const match = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  return match === null ? 0 : Number(match[1]);
}

function serve(socket: Socket): void {
  socket.setNoDelay(true);
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (data: Buffer) => {
    pending = pending.length === 0 ? data : Buffer.concat([pending, data]);
    for (;;) {
      const headerEnd = pending.indexOf(HEADER_END);
      if (headerEnd < 0) return;
      const bodyStart = headerEnd + HEADER_END.length;
      const requestEnd = bodyStart + contentLength(pending.subarray(0, headerEnd).toString('latin1'));
      if (pending.length < requestEnd) return;
      const request = pending.subarray(0, requestEnd);
      pending = pending.subarray(requestEnd);
      if (request[0] === 0x47 /* G */) {
        socket.write(EMPTY_OK);
        continue;
      }
      noteArrival(request);
      socket.write(RESPONSE_HEAD);
      streams.push({ socket, nextEvent: 0 });
      schedulePump();
    }
  });
  socket.on('error', () => socket.destroy());
}

const server = createServer(serve);
// A deep accept queue: a client that falls behind opens hundreds of connections at once, and with Node's default
// backlog (511) the overflow is refused, which would show as the client's failure, not the stub's.
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  process.stdout.write(`PORT ${(server.address() as AddressInfo).port}\n`);
});
process.stdin.on('end', () => {
  if (ARRIVALS_FILE !== undefined) {
    const lines: string[] = [];
    for (let index = 0; index < arrivalCount; index++) lines.push((arrivalsMs[index] as number).toFixed(4));
    lines.push(`END ${lastAnswerEndMs.toFixed(4)}`);
    writeFileSync(ARRIVALS_FILE, `${lines.join('\n')}\n`);
  }
  process.exit(0);
});
process.stdin.resume();
