/* global process, setTimeout, setImmediate, performance */
// A TCP relay that holds every chunk for a fixed delay in each direction: the one-way network delay of the real-hop
// tests (this machine's kernel has no netem qdisc). Plain JavaScript because it runs as its own process inside a
// network namespace (`ip netns exec NS node delay-relay.mjs ...`), outside vitest's TypeScript transform.
//
// Usage: node delay-relay.mjs LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_MS
// Prints "delay-relay listening" once it accepts connections; ends on SIGTERM.
//
// Timing: a chunk is due DELAY_MS after the 'data' event that delivered it. setTimeout alone fires up to a millisecond
// late, so the relay sleeps with setTimeout only until ~1 ms before the next due chunk and then turns the event loop with
// setImmediate (which still lets socket reads run between turns) until the chunk is due.
import net from 'node:net';

const [listenHost, listenPortText, targetHost, targetPortText, delayText] = process.argv.slice(2);
const delayMs = Number(delayText);
if (!listenHost || !targetHost || !Number.isFinite(delayMs) || delayMs < 0) {
  process.stderr.write('usage: node delay-relay.mjs LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_MS\n');
  process.exit(2);
}

/** Chunks waiting for their instant, in due order (one constant delay keeps arrival order = due order). */
const queue = [];
let timer = null;
let spinning = false;

function flush() {
  timer = null;
  spinning = false;
  const now = performance.now();
  while (queue.length > 0 && queue[0].dueMs <= now) {
    const { socket, chunk } = queue.shift();
    if (socket.destroyed) continue;
    // A null chunk is the peer's end of stream, delayed like the data before it.
    if (chunk === null) socket.end();
    else socket.write(chunk);
  }
  schedule();
}

function schedule() {
  if (queue.length === 0 || timer !== null || spinning) return;
  const waitMs = queue[0].dueMs - performance.now();
  if (waitMs > 1.2) {
    timer = setTimeout(flush, waitMs - 1);
  } else {
    spinning = true;
    setImmediate(flush);
  }
}

function relay(from, to) {
  from.on('data', (chunk) => {
    queue.push({ socket: to, chunk, dueMs: performance.now() + delayMs });
    schedule();
  });
  from.on('end', () => {
    queue.push({ socket: to, chunk: null, dueMs: performance.now() + delayMs });
    schedule();
  });
  from.on('error', () => to.destroy());
}

const server = net.createServer((client) => {
  client.setNoDelay(true);
  const upstream = net.connect({ host: targetHost, port: Number(targetPortText) }, () => upstream.setNoDelay(true));
  relay(client, upstream);
  relay(upstream, client);
});
server.listen({ host: listenHost, port: Number(listenPortText) }, () => process.stdout.write('delay-relay listening\n'));
process.on('SIGTERM', () => process.exit(0));
