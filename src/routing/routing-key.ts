import { TextBytesWriter } from '../utils/text-bytes-writer.js';

/**
 * The text cache-aware routing matches prefixes on, taken from a parsed request body as smg takes it
 * (`extract_text_for_routing` in crates/protocols, lightseekorg/smg, checked 2026-11-23):
 * - `/generate`: `text`, else the `input_ids` as decimal numbers joined by spaces (a batch's sequences flattened);
 * - `/v1/completions`: `prompt`, strings of an array joined by spaces;
 * - `/v1/chat/completions`: the messages' texts (a message's text parts joined by spaces, an assistant's
 *   `reasoning_content` after its content), the non-empty ones joined by spaces.
 * Anything else gives an empty key, which cache-aware routing treats as matching nothing. (Bodies smg would refuse, such
 * as a batch of texts or a prompt of token ids, get the same rules: texts joined by spaces, ids as above.)
 */
export function routingKeyFromBody(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const fields = body as Record<string, unknown>;
  const text = textOf(fields['text']) ?? textOf(fields['prompt']);
  if (text !== undefined) return text;
  if (Array.isArray(fields['input_ids'])) return idsText(fields['input_ids']);
  if (Array.isArray(fields['messages'])) return messagesText(fields['messages']);
  return '';
}

/**
 * The key `routingKeyFromBody` gives a `/generate` body carrying only `input_ids`, from the ids themselves: the same
 * string as joining them with spaces, without building a string per id (a virtual-time run routes a million prompts
 * of hundreds of ids each; join was 15% of such a run).
 */
export function routingKeyFromTokenIds(ids: ArrayLike<number>): string {
  keyWriter.joined(ids, SPACE);
  return keyWriter.takeAscii();
}

const SPACE = 0x20;
/** Reused across keys. */
const keyWriter = new TextBytesWriter(8192);

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
    if (value.every((item) => typeof item === 'string')) return value.join(' ');
    return idsText(value);
  }
  return undefined;
}

/** Token ids (a batch of sequences flattened) as decimal numbers joined by spaces. */
function idsText(ids: unknown[]): string {
  return ids.flat().join(' ');
}

/** A message content's text: a string, or the non-empty text parts joined by spaces (images and the like skipped). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part !== 'object' || part === null) continue;
    const text = (part as Record<string, unknown>)['text'];
    if (typeof text === 'string' && text !== '') texts.push(text);
  }
  return texts.join(' ');
}

function messagesText(messages: unknown[]): string {
  const texts: string[] = [];
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const fields = message as Record<string, unknown>;
    const content = contentText(fields['content']);
    if (content !== '') texts.push(content);
    // smg adds an assistant's reasoning after its answer.
    const reasoning = fields['role'] === 'assistant' ? fields['reasoning_content'] : undefined;
    if (typeof reasoning === 'string' && reasoning !== '') texts.push(reasoning);
  }
  return texts.join(' ');
}
