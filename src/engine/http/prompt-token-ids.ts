import { wordTokenIds } from '../../utils/word-tokenizer.js';
import { BadRequest, isRecord } from './http-helpers.js';

/**
 * The prompt of each protocol the simulated server speaks, as token ids: SGLang's `/generate`, OpenAI completions and
 * chat. A malformed prompt is a BadRequest whose message is the one SGLang's server gives for it, where it gives one.
 */

/** `/generate` takes exactly one of `text` (a string) and `input_ids` (token ids). */
export function generatePrompt(body: Record<string, unknown>): ArrayLike<number> {
  const text = body['text'];
  const inputIds = body['input_ids'];
  if (text !== undefined && text !== null && inputIds !== undefined && inputIds !== null) {
    throw new BadRequest('Either text or input_ids should be provided, not both.');
  }
  if (typeof text === 'string') return wordTokenIds(text);
  if (Array.isArray(inputIds)) return tokenIdsFrom(inputIds, 'input_ids');
  if (Array.isArray(text)) {
    throw new BadRequest('Batched text (a list of prompts) is not supported by the simulator: send one per request.');
  }
  throw new BadRequest('Either text, input_ids or input_embeds should be provided.');
}

function tokenIdsFrom(values: unknown[], field: string): number[] {
  if (values.length > 0 && Array.isArray(values[0])) {
    throw new BadRequest(`Batched ${field} is not supported by the simulator: send one prompt per request.`);
  }
  for (const value of values) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      throw new BadRequest(`${field} must be a list of non-negative integers.`);
    }
  }
  return values as number[];
}

export function completionPrompt(body: Record<string, unknown>): ArrayLike<number> {
  const prompt = body['prompt'];
  if (typeof prompt === 'string') return wordTokenIds(prompt);
  if (Array.isArray(prompt)) {
    if (prompt.length === 1 && typeof prompt[0] === 'string') return wordTokenIds(prompt[0]);
    return tokenIdsFrom(prompt, 'prompt');
  }
  throw new BadRequest('prompt must be a string or a list of token ids.');
}

/** A chat prompt is tokenized as `<|role|> content` per message, a stand-in for a chat template. */
export function chatPrompt(body: Record<string, unknown>): ArrayLike<number> {
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) throw new BadRequest('messages must be a non-empty list.');
  const parts: string[] = [];
  for (const message of messages) {
    if (!isRecord(message) || typeof message['role'] !== 'string') {
      throw new BadRequest('each message must be an object with a role and content.');
    }
    const content = message['content'];
    let text = '';
    if (typeof content === 'string') text = content;
    else if (Array.isArray(content)) {
      text = content
        .map((part) => (isRecord(part) && typeof part['text'] === 'string' ? part['text'] : ''))
        .join(' ');
    } else if (content !== null && content !== undefined) {
      throw new BadRequest('message content must be a string or a list of parts.');
    }
    parts.push(`<|${message['role']}|> ${text}`);
  }
  parts.push('<|assistant|>');
  return wordTokenIds(parts.join('\n'));
}
