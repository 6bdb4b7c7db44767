import type { ProtocolClientOptions } from '../../types/client.js';

/** The model name sent when none is configured; SGLang and vLLM serve one model and accept any name for it. */
export const DEFAULT_MODEL_NAME = 'default';

/** Body fields both OpenAI-compatible endpoints share. `ignore_eos` is an SGLang/vLLM extension, sent only when on. */
export function commonOpenAiFields(options: ProtocolClientOptions, outputLength: number): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    model: options.model ?? DEFAULT_MODEL_NAME,
    max_tokens: outputLength,
    temperature: options.sampling.temperature,
    stream: options.stream,
  };
  if (options.stream) fields['stream_options'] = { include_usage: true };
  if (options.sampling.ignoreEos) fields['ignore_eos'] = true;
  return fields;
}
