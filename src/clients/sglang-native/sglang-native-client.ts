import { ServelabError } from '../../errors/servelab-error.js';
import type { ClientRequest, ProtocolClient, ProtocolClientOptions } from '../../types/client.js';
import type { ClientOutcome } from '../../types/record.js';
import type { SamplingSettings } from '../../types/workload.js';
import { HttpTransport } from '../common/http-transport.js';
import { SglangGenerateDecoder } from './sglang-generate-decoder.js';

/** SGLang's native `/generate` endpoint, streaming (SSE) or not. */
export class SglangNativeClient implements ProtocolClient {
  readonly protocol = 'sglang';
  readonly #transport: HttpTransport;
  readonly #stream: boolean;
  readonly #sampling: SamplingSettings;

  constructor(options: ProtocolClientOptions) {
    this.#transport = new HttpTransport(options);
    this.#stream = options.stream;
    this.#sampling = options.sampling;
  }

  send(request: ClientRequest): Promise<ClientOutcome> {
    const stream = this.#stream;
    let body: string;
    try {
      body = generateBody(request, this.#sampling, stream);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#transport.send({
      path: '/generate',
      body,
      requestId: request.requestId,
      ...(request.workload.routingKey === undefined ? {} : { routingKey: request.workload.routingKey }),
      stream,
      decoder: new SglangGenerateDecoder(stream, request.workload.outputLength),
      maxOutputTokens: request.workload.outputLength,
      inputTokens: request.workload.inputLength,
      signal: request.signal,
    });
  }

  close(): Promise<void> {
    return this.#transport.close();
  }
}

/** `{text | input_ids, sampling_params: {max_new_tokens, ignore_eos, temperature}, stream, rid}` (docs/protocols.md). */
export function generateBody(request: ClientRequest, sampling: SamplingSettings, stream: boolean): string {
  const workload = request.workload;
  const samplingParams = {
    max_new_tokens: workload.outputLength,
    ignore_eos: sampling.ignoreEos,
    temperature: sampling.temperature,
  };
  if (workload.inputIds !== undefined) {
    return JSON.stringify({ input_ids: Array.from(workload.inputIds), sampling_params: samplingParams, stream, rid: request.requestId });
  }
  if (workload.prompt !== undefined) {
    return JSON.stringify({ text: workload.prompt, sampling_params: samplingParams, stream, rid: request.requestId });
  }
  throw new ServelabError(
    'INVALID_CONFIG',
    `request ${request.requestId} has chat messages only; the sglang protocol sends text or input_ids. ` +
      'Use protocol openai-chat for chat workloads, or a dataset that yields prompts.',
  );
}
