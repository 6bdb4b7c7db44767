/**
 * The bare Node client, the CPU baseline of node-cli-targets: the least a Node process can spend to send this
 * benchmark's requests and take in their streamed answers. Run as a child process (pinned like the CLI it stands
 * beside), it follows the same schedule against the same kind of stub with nothing servelab does: keep-alive
 * `net.Socket`s, one pre-built request written per arrival, answers only scanned for their last bytes (no HTTP or SSE
 * parsing, no token times, no records, no files), the waits on plain `setTimeout` (the cheapest wake-up Node has,
 * a millisecond coarse, so its lag says nothing about pacing).
 *
 * What it spends per request is the runtime's floor on this machine for this traffic: the timer wake-up, the write
 * system call, and one wake-up and read per TCP segment the stub's answer comes in (the reads per answer are printed
 * beside). A client that parses and records can only add to it.
 *
 * Protocol: argv = URL, path of a file of schedule offsets (ms from the start, one per line). Prints one JSON line,
 * `FloorClientFigures`, when the last answer has ended, and exits.
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

export interface FloorClientFigures {
  /** CPU (user + system, all threads) from the first send to the end of the last answer, per request. */
  cpuPerRequestUs: number;
  /** Socket reads per answer: how many wake-ups the stub's writes cost the client. */
  readsPerAnswer: number;
}

/** The last bytes of every answer: the chunked encoding's terminating chunk. */
const ANSWER_END = Buffer.from('0\r\n\r\n');

function endsAnswer(data: Buffer): boolean {
  return data.length >= ANSWER_END.length && data.subarray(data.length - ANSWER_END.length).equals(ANSWER_END);
}

function requestBytes(url: URL): Buffer {
  // About the CLI's own request for a 32-token prompt and 16 streamed tokens.
  const body = JSON.stringify({
    input_ids: Array.from({ length: 32 }, (_, index) => 1000 + index * 37),
    sampling_params: { max_new_tokens: 16, min_new_tokens: 16, ignore_eos: true, temperature: 0 },
    stream: true,
    rid: 'floor-client-request-00000000',
  });
  return Buffer.from(`POST /generate HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

async function main(): Promise<void> {
  const [urlText, scheduleFile] = process.argv.slice(2);
  if (urlText === undefined || scheduleFile === undefined) throw new Error('usage: floor-client URL SCHEDULE_FILE');
  const url = new URL(urlText);
  const offsetsMs = Float64Array.from(readFileSync(scheduleFile, 'utf8').trim().split('\n').map(Number));
  const count = offsetsMs.length;
  const request = requestBytes(url);
  const idle: Socket[] = [];
  let sent = 0;
  let answered = 0;
  let reads = 0;
  let cpuAtFirstSend: NodeJS.CpuUsage | undefined;
  const finish = (): void => {
    const cpu = process.cpuUsage(cpuAtFirstSend);
    const figures: FloorClientFigures = { cpuPerRequestUs: (cpu.user + cpu.system) / count, readsPerAnswer: reads / count };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    process.exit(0);
  };
  const open = (): Socket => {
    const socket = connect(Number(url.port), url.hostname);
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => {
      reads++;
      if (!endsAnswer(data)) return;
      idle.push(socket);
      if (++answered === count) finish();
    });
    socket.on('error', (error) => {
      process.stderr.write(`floor client: ${error.message}\n`);
      process.exit(1);
    });
    return socket;
  };
  const startMs = performance.now() + 100;
  const sendDue = (): void => {
    const nowMs = performance.now();
    cpuAtFirstSend ??= process.cpuUsage();
    while (sent < count && startMs + (offsetsMs[sent] as number) <= nowMs) {
      (idle.pop() ?? open()).write(request);
      sent++;
    }
    if (sent < count) setTimeout(sendDue, Math.max(0, startMs + (offsetsMs[sent] as number) - performance.now()));
  };
  setTimeout(sendDue, 100);
}

await main();
