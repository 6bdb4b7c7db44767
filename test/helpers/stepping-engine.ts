import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A continuous-batching engine on loopback (port 0) with SGLang's /generate face and --enable-metrics timestamps,
 * whose steps are timers: every running request gets a token a step, and a prompt joins the next step whole (mixed
 * scheduling). Its step time drops from `slowStepMs` to `fastStepMs` once `slowRequests` requests have finished, as
 * transformers' continuous batching without CUDA graphs once went from 66 ms to 26 ms a step between two runs of the
 * same four streams. A step with a prompt longer than 64 tokens lasts `prefillExtraMs` more.
 */
export interface SteppingEngineOptions {
  slowStepMs: number;
  fastStepMs: number;
  slowRequests: number;
  prefillExtraMs: number;
}

interface Running {
  response: ServerResponse;
  promptTokens: number;
  remaining: number;
  produced: number;
  forwardEntrySeconds?: number;
  prefillFinishedSeconds?: number;
}

export async function startSteppingEngine(options: SteppingEngineOptions): Promise<{ url: string; close(): Promise<void> }> {
  const running: Running[] = [];
  let finished = 0;
  let stepping = false;
  let closed = false;
  const nowSeconds = (): number => Date.now() / 1000;
  const send = (request: Running, meta: Record<string, unknown>): void => {
    request.response.write(`data: ${JSON.stringify({ text: 'x'.repeat(request.produced), meta_info: { completion_tokens: request.produced, ...meta } })}\n\n`);
  };
  const step = (): void => {
    if (closed || running.length === 0) {
      stepping = false;
      return;
    }
    stepping = true;
    const members = running.slice();
    const entered = nowSeconds();
    for (const member of members) member.forwardEntrySeconds ??= entered;
    const prefilling = members.some((member) => member.prefillFinishedSeconds === undefined && member.promptTokens > 64);
    const stepMs = (finished < options.slowRequests ? options.slowStepMs : options.fastStepMs) + (prefilling ? options.prefillExtraMs : 0);
    setTimeout(() => {
      const at = nowSeconds();
      for (const member of members) {
        member.prefillFinishedSeconds ??= at;
        member.produced++;
        member.remaining--;
        const timestamps = { forward_entry_time: member.forwardEntrySeconds, prefill_finished_time: member.prefillFinishedSeconds };
        if (member.remaining > 0) {
          send(member, timestamps);
          continue;
        }
        send(member, { ...timestamps, request_finished_ts: at });
        member.response.end('data: [DONE]\n\n');
        running.splice(running.indexOf(member), 1);
        finished++;
      }
      step();
    }, stepMs);
  };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const parsed = JSON.parse(body) as { input_ids: number[]; sampling_params: { max_new_tokens: number } };
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      running.push({ response, promptTokens: parsed.input_ids.length, remaining: parsed.sampling_params.max_new_tokens, produced: 0 });
      if (!stepping) step();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
