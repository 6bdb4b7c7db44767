// Characters XML 1.0 forbids even when escaped (C0 controls other than tab, newline and carriage return, and the two
// non-characters U+FFFE and U+FFFF): a node name or an error text carrying one would make the whole SVG unreadable.
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Text safe both as element content and inside a double- or single-quoted attribute. */
export function escapeXml(text: string): string {
  return text.replace(FORBIDDEN, '').replace(/[&<>"']/g, (character) => ESCAPES[character] as string);
}
