/**
 * The text cache-aware routing matches prefixes on, taken from a parsed request body:
 * - `/generate`: `text` (a batch's texts joined), else the stringified `input_ids`;
 * - `/v1/completions`: `prompt` (string, strings joined, or token ids stringified);
 * - `/v1/chat/completions`: the messages' contents joined, in order.
 * Anything else gives an empty key, which cache-aware routing treats as matching nothing.
 */
export function routingKeyFromBody(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const fields = body as Record<string, unknown>;
  const text = textOf(fields['text']) ?? textOf(fields['prompt']);
  if (text !== undefined) return text;
  if (Array.isArray(fields['input_ids'])) return JSON.stringify(fields['input_ids']);
  if (Array.isArray(fields['messages'])) return messagesText(fields['messages']);
  return '';
}

/**
 * The key `routingKeyFromBody` gives a `/generate` body carrying only `input_ids`, from the ids themselves: the same
 * string as JSON.stringify of the id array, without building that array (a virtual-time run routes a million prompts
 * of hundreds of ids each).
 */
export function routingKeyFromTokenIds(ids: ArrayLike<number> & { join(separator: string): string }): string {
  return `[${ids.join(',')}]`;
}

/** `rid` from a parsed `/generate` body (the first one for a batch), when it is a string. */
export function requestIdFromBody(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const rid = (body as Record<string, unknown>)['rid'];
  if (typeof rid === 'string') return rid;
  if (Array.isArray(rid) && typeof rid[0] === 'string') return rid[0];
  return undefined;
}

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.length > 0) {
    if (value.every((item) => typeof item === 'string')) return value.join('');
    return JSON.stringify(value);
  }
  return undefined;
}

function messagesText(messages: unknown[]): string {
  let text = '';
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const content = (message as Record<string, unknown>)['content'];
    if (typeof content === 'string') text += content;
    else if (Array.isArray(content)) {
      // Multi-part content: only the text parts carry a prefix worth matching.
      for (const part of content) {
        if (typeof part === 'object' && part !== null && typeof (part as Record<string, unknown>)['text'] === 'string') {
          text += (part as Record<string, unknown>)['text'] as string;
        }
      }
    }
  }
  return text;
}
