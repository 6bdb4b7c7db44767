import type { ClientRequest, ProtocolClientOptions } from '../../types/client.js';
import { OpenAiCompatibleClient } from '../openai-shared/openai-compatible-client.js';
import { nonEmptyString } from '../openai-shared/openai-decoder.js';
import { commonOpenAiFields } from '../openai-shared/openai-request.js';

type JsonObject = Record<string, unknown>;

/** A streamed completions choice carries its new text in `text`. */
function completionChoiceHasContent(choice: JsonObject): boolean {
  return nonEmptyString(choice['text']);
}

/** OpenAI-compatible `/v1/completions`, streaming (with usage on every chunk and at the end) or not. */
export class OpenAiCompletionsClient extends OpenAiCompatibleClient {
  constructor(options: ProtocolClientOptions) {
    super({ protocol: 'openai-completions', path: '/v1/completions', body: completionsBody, choiceHasContent: completionChoiceHasContent }, options);
  }
}

/**
 * `{model, prompt, max_tokens, temperature, stream, rid, stream_options?, ignore_eos?}`. The prompt is the text, or the
 * token ids (the completions API accepts a list of ids as a prompt), or — for a chat workload — the messages' contents
 * joined by newlines (no chat template is applied: use openai-chat for that).
 */
export function completionsBody(request: ClientRequest, options: ProtocolClientOptions): string {
  const workload = request.workload;
  const prompt = workload.prompt ?? (workload.inputIds === undefined ? undefined : Array.from(workload.inputIds)) ?? (workload.messages ?? []).map((message) => message.content).join('\n');
  return JSON.stringify({ ...commonOpenAiFields(options, workload.outputLength, request.requestId), prompt });
}
