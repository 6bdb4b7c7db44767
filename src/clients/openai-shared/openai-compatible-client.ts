import type { ClientRequest, ProtocolClient, ProtocolClientOptions } from '../../types/client.js';
import type { ClientOutcome } from '../../types/record.js';
import { HttpTransport } from '../common/http-transport.js';
import { OpenAiDecoder } from './openai-decoder.js';

type JsonObject = Record<string, unknown>;

/** What distinguishes one OpenAI-compatible endpoint from another. */
export interface OpenAiEndpoint {
  protocol: string;
  path: string;
  /** The JSON body; may throw (as a rejected send) when the workload cannot be expressed on this endpoint. */
  body(request: ClientRequest, options: ProtocolClientOptions): string;
  /** Whether a streamed choice carries new tokens. */
  choiceHasContent(choice: JsonObject): boolean;
}

/** An OpenAI-compatible client for one endpoint, streaming (with usage on every chunk and at the end) or not. */
export class OpenAiCompatibleClient implements ProtocolClient {
  readonly protocol: string;
  readonly #endpoint: OpenAiEndpoint;
  readonly #transport: HttpTransport;
  readonly #options: ProtocolClientOptions;

  constructor(endpoint: OpenAiEndpoint, options: ProtocolClientOptions) {
    this.protocol = endpoint.protocol;
    this.#endpoint = endpoint;
    this.#transport = new HttpTransport(options);
    this.#options = options;
  }

  send(request: ClientRequest): Promise<ClientOutcome> {
    const stream = this.#options.stream;
    let body: string;
    try {
      body = this.#endpoint.body(request, this.#options);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#transport.send({
      path: this.#endpoint.path,
      body,
      requestId: request.requestId,
      ...(request.workload.routingKey === undefined ? {} : { routingKey: request.workload.routingKey }),
      stream,
      decoder: new OpenAiDecoder(stream, this.#endpoint.choiceHasContent, request.workload.outputLength),
      maxOutputTokens: request.workload.outputLength,
      inputTokens: request.workload.inputLength,
      signal: request.signal,
    });
  }

  close(): Promise<void> {
    return this.#transport.close();
  }
}
