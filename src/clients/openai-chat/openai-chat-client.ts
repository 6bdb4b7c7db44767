import { ServelabError } from '../../errors/servelab-error.js';
import type { ClientRequest, ProtocolClient, ProtocolClientOptions } from '../../types/client.js';
import type { ClientOutcome } from '../../types/record.js';
import { nonEmptyString, OpenAiDecoder } from '../openai-shared/openai-decoder.js';
import { commonOpenAiFields } from '../openai-shared/openai-request.js';
import { HttpTransport } from '../shared/http-transport.js';

type JsonObject = Record<string, unknown>;

/**
 * A streamed chat choice carries new tokens in `delta.content`, or in `delta.reasoning_content` (reasoning models on
 * SGLang and vLLM) or `delta.tool_calls`. The first chunk's `{role: "assistant", content: ""}` carries none.
 */
function chatChoiceHasContent(choice: JsonObject): boolean {
  const delta = choice['delta'];
  if (typeof delta !== 'object' || delta === null) return false;
  const fields = delta as JsonObject;
  if (nonEmptyString(fields['content']) || nonEmptyString(fields['reasoning_content'])) return true;
  const toolCalls = fields['tool_calls'];
  return Array.isArray(toolCalls) && toolCalls.length > 0;
}

/** OpenAI-compatible `/v1/chat/completions`, streaming (with `stream_options.include_usage`) or not. */
export class OpenAiChatClient implements ProtocolClient {
  readonly protocol = 'openai-chat';
  readonly #transport: HttpTransport;
  readonly #options: ProtocolClientOptions;

  constructor(options: ProtocolClientOptions) {
    this.#transport = new HttpTransport(options);
    this.#options = options;
  }

  send(request: ClientRequest): Promise<ClientOutcome> {
    const stream = this.#options.stream;
    let body: string;
    try {
      body = chatBody(request, this.#options);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#transport.send({
      path: '/v1/chat/completions',
      body,
      requestId: request.requestId,
      stream,
      decoder: new OpenAiDecoder(stream, chatChoiceHasContent),
      signal: request.signal,
    });
  }

  close(): Promise<void> {
    return this.#transport.close();
  }
}

/** `{model, messages, max_tokens, temperature, stream, stream_options?, ignore_eos?}`; a text prompt is one user message. */
export function chatBody(request: ClientRequest, options: ProtocolClientOptions): string {
  const workload = request.workload;
  let messages = workload.messages;
  if (messages === undefined) {
    if (workload.prompt === undefined) {
      throw new ServelabError(
        'INVALID_CONFIG',
        `request ${request.requestId} has token ids only; chat completions need text. ` +
          'Use protocol sglang or openai-completions for the random-ids dataset.',
      );
    }
    messages = [{ role: 'user', content: workload.prompt }];
  }
  return JSON.stringify({ ...commonOpenAiFields(options, workload.outputLength), messages });
}
