/** Headers that describe one connection, not the message (RFC 9110 §7.6.1): a proxy must not copy them. */
const HOP_BY_HOP_HEADERS = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade'];

/**
 * Request headers not copied: the hop-by-hop ones, plus those the proxy recomputes: `host` (the upstream's own),
 * `content-length` (undici sets it from the buffered body) and `expect`.
 */
const REQUEST_HEADERS_NOT_FORWARDED = new Set([...HOP_BY_HOP_HEADERS, 'host', 'content-length', 'expect']);

/** Response headers not copied: Node's server frames the body itself (chunked unless a content-length is given). */
const RESPONSE_HEADERS_NOT_FORWARDED = new Set(HOP_BY_HOP_HEADERS);

/**
 * The request's headers as a flat `[name, value, ...]` list for undici, without hop-by-hop headers. Raw headers keep
 * the client's spelling and order.
 */
export function forwardedRequestHeaders(rawHeaders: readonly string[]): string[] {
  const headers: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] as string;
    if (REQUEST_HEADERS_NOT_FORWARDED.has(name.toLowerCase())) continue;
    headers.push(name, rawHeaders[index + 1] as string);
  }
  return headers;
}

/** The first value of a header in a raw `[name, value, ...]` list, by lower-case name. */
export function rawHeaderValue(rawHeaders: readonly string[], lowerCaseName: string): string | undefined {
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] as string;
    if (name.length === lowerCaseName.length && name.toLowerCase() === lowerCaseName) return rawHeaders[index + 1];
  }
  return undefined;
}

/** Upstream response headers (undici's parsed, lower-case object) minus hop-by-hop ones, for `writeHead`. */
export function forwardedResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const forwarded: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || RESPONSE_HEADERS_NOT_FORWARDED.has(name)) continue;
    forwarded[name] = value;
  }
  return forwarded;
}
