/**
 * The zero-work streaming stub for bench/client-cpu.ts, run in a child process (pinned to its own core).
 *
 * It speaks just enough HTTP/1.1 on raw sockets to be cheap: for each request it answers at once with the headers and
 * the first SGLang `/generate` event, then one event per tick of a shared 1 ms ticker until 16 tokens, then `[DONE]`
 * and the end of the chunked body. Connections stay open (keep-alive). Prints its port on stdout.
 */
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

const TOKENS = Number(process.env['STUB_TOKENS'] ?? 16);
const TICK_MS = Number(process.env['STUB_TICK_MS'] ?? 1);

function chunk(payload: string): Buffer {
  const body = Buffer.from(payload, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')]);
}

// Prebuilt events, shaped like SGLang's with --enable-metrics (compact JSON, cumulative text).
const words = ' the model data test node load rate queue batch token cache route server client value point'.split(' ').slice(1);
const events: Buffer[] = [];
for (let token = 1; token <= TOKENS; token++) {
  const last = token === TOKENS;
  const meta = {
    id: 'stub',
    finish_reason: last ? { type: 'length', length: TOKENS } : null,
    prompt_tokens: 32,
    weight_version: 'default',
    num_retractions: 0,
    forward_entry_time: 1763712000.437915,
    prefill_finished_time: 1763712000.489207,
    queue_time: 0.019842,
    prefill_waiting_latency: 0.000412,
    prefill_launch_latency: 0.001206,
    reasoning_tokens: 0,
    completion_tokens: token,
    cached_tokens: 0,
    cached_tokens_details: null,
    dp_rank: null,
    ...(last ? { e2e_latency: 0.02, request_received_ts: 1763712000.41, response_sent_to_client_ts: 1763712000.44 } : {}),
  };
  const text = words.slice(0, token).map((word) => ` ${word ?? 'x'}`).join('');
  events.push(chunk(`data: ${JSON.stringify({ text, output_ids: [1000 + token], meta_info: meta })}\n\n`));
}
const done = Buffer.concat([chunk('data: [DONE]\n\n'), Buffer.from('0\r\n\r\n')]);
const head = Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n');

interface ActiveStream {
  socket: Socket;
  next: number;
}
const active = new Set<ActiveStream>();

setInterval(() => {
  for (const stream of active) {
    if (stream.socket.destroyed) {
      active.delete(stream);
      continue;
    }
    const event = events[stream.next++] as Buffer;
    if (stream.next >= TOKENS) {
      stream.socket.write(Buffer.concat([event, done]));
      active.delete(stream);
    } else {
      stream.socket.write(event);
    }
  }
}, TICK_MS);

const server = createServer({ noDelay: true }, (socket) => {
  socket.setNoDelay(true);
  let pending: Buffer = Buffer.alloc(0);
  socket.on('error', () => undefined);
  socket.on('data', (data: Buffer) => {
    pending = pending.length === 0 ? data : Buffer.concat([pending, data]);
    for (;;) {
      const headEnd = pending.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const headText = pending.toString('latin1', 0, headEnd).toLowerCase();
      const match = /content-length:\s*(\d+)/.exec(headText);
      const bodyLength = match === null ? 0 : Number(match[1]);
      const total = headEnd + 4 + bodyLength;
      if (pending.length < total) return;
      pending = pending.subarray(total);
      // Headers and the first token at once: the stub does no work before its first token.
      socket.write(Buffer.concat([head, events[0] as Buffer]));
      active.add({ socket, next: 1 });
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
