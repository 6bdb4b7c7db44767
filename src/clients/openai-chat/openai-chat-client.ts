import { ServelabError } from '../../errors/servelab-error.js';
import type { ClientRequest, ProtocolClientOptions } from '../../types/client.js';
import { OpenAiCompatibleClient } from '../openai-shared/openai-compatible-client.js';
import { nonEmptyString } from '../openai-shared/openai-decoder.js';
import { commonOpenAiFields } from '../openai-shared/openai-request.js';

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

/** OpenAI-compatible `/v1/chat/completions`, streaming (with usage on every chunk and at the end) or not. */
export class OpenAiChatClient extends OpenAiCompatibleClient {
  constructor(options: ProtocolClientOptions) {
    super({ protocol: 'openai-chat', path: '/v1/chat/completions', body: chatBody, choiceHasContent: chatChoiceHasContent }, options);
  }
}

/** `{model, messages, max_tokens, temperature, stream, rid, stream_options?, ignore_eos?}`; a text prompt is one user message. */
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
  return JSON.stringify({ ...commonOpenAiFields(options, workload.outputLength, request.requestId), messages });
}
