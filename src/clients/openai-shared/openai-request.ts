import type { ProtocolClientOptions } from '../../types/client.js';

/** The model name sent when none is configured; SGLang and vLLM serve one model and accept any name for it. */
export const DEFAULT_MODEL_NAME = 'default';

/**
 * Body fields both OpenAI-compatible endpoints share. `ignore_eos` is an SGLang/vLLM extension, sent only when on.
 * `rid` (SGLang's request id, which it hands to the engine and writes in its request log) is the client's request id,
 * so that server request-log lines join to records on every protocol; vLLM ignores the field. Streams ask for the
 * usage on every chunk (`continuous_usage_stats`: how many tokens each chunk carried) and at the end (`include_usage`).
 * With `openaiExtensions: false` only OpenAI's own fields are sent (its API refuses unknown ones): no `rid`, no
 * `ignore_eos` (outputs may then stop early), and the usage at the end only.
 */
export function commonOpenAiFields(options: ProtocolClientOptions, outputLength: number, requestId: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    model: options.model ?? DEFAULT_MODEL_NAME,
    max_tokens: outputLength,
    temperature: options.sampling.temperature,
    stream: options.stream,
  };
  const extensions = options.openaiExtensions !== false;
  if (extensions) fields['rid'] = requestId;
  if (options.stream) fields['stream_options'] = extensions ? { include_usage: true, continuous_usage_stats: true } : { include_usage: true };
  if (options.sampling.ignoreEos && extensions) fields['ignore_eos'] = true;
  return fields;
}
