/**
 * A small well-formedness check for the SVG documents servelab writes (elements, attributes, text, comments, an XML
 * declaration; no DTD, no CDATA, no processing instructions beyond the declaration). Returns the first problem, or
 * undefined. It is strict where the SVGs could go wrong: unescaped `<` or `&`, unbalanced or crossed tags, duplicate
 * attributes, characters XML forbids, more than one root element.
 */
const NAME = /^[A-Za-z_:][\w.:-]*/;
const ENTITY = /^&(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/;
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

function textProblem(text: string, where: string): string | undefined {
  if (FORBIDDEN.test(text)) return `a character XML forbids in ${where}`;
  if (text.includes('<')) return `a raw < in ${where}`;
  for (let index = text.indexOf('&'); index !== -1; index = text.indexOf('&', index + 1)) {
    if (!ENTITY.test(text.slice(index))) return `a raw & in ${where}: ${text.slice(index, index + 12)}`;
  }
  return undefined;
}

export function xmlProblem(document: string): string | undefined {
  const open: string[] = [];
  let roots = 0;
  let position = 0;
  if (document.startsWith('<?xml')) {
    const end = document.indexOf('?>');
    if (end === -1) return 'an unterminated XML declaration';
    position = end + 2;
  }
  while (position < document.length) {
    const next = document.indexOf('<', position);
    const text = document.slice(position, next === -1 ? document.length : next);
    if (open.length === 0 && text.trim() !== '') return `text outside the root element: ${text.slice(0, 20)}`;
    const problem = textProblem(text, 'text');
    if (problem) return problem;
    if (next === -1) break;
    if (document.startsWith('<!--', next)) {
      const end = document.indexOf('-->', next + 4);
      if (end === -1) return 'an unterminated comment';
      position = end + 3;
      continue;
    }
    const close = document.startsWith('</', next);
    const name = NAME.exec(document.slice(next + (close ? 2 : 1)))?.[0];
    if (!name) return `a tag without a name at ${next}`;
    let cursor = next + (close ? 2 : 1) + name.length;
    const attributes = new Set<string>();
    for (;;) {
      const whitespace = /^\s*/.exec(document.slice(cursor))?.[0].length ?? 0;
      cursor += whitespace;
      if (document.startsWith('/>', cursor) || document.startsWith('>', cursor)) break;
      if (close) return `an attribute on the closing tag </${name}>`;
      if (whitespace === 0) return `no space before an attribute of <${name}>`;
      const attribute = NAME.exec(document.slice(cursor))?.[0];
      if (!attribute) return `a malformed attribute on <${name}> at ${cursor}`;
      if (attributes.has(attribute)) return `attribute ${attribute} twice on <${name}>`;
      attributes.add(attribute);
      cursor += attribute.length;
      const quote = /^\s*=\s*(["'])/.exec(document.slice(cursor));
      if (!quote) return `attribute ${attribute} of <${name}> has no quoted value`;
      cursor += quote[0].length;
      const end = document.indexOf(quote[1] as string, cursor);
      if (end === -1) return `an unterminated value of ${attribute}`;
      const valueProblem = textProblem(document.slice(cursor, end), `attribute ${attribute} of <${name}>`);
      if (valueProblem) return valueProblem;
      cursor = end + 1;
    }
    const selfClosing = document.startsWith('/>', cursor);
    if (close) {
      if (open.pop() !== name) return `</${name}> does not close the open element`;
    } else {
      if (open.length === 0 && ++roots > 1) return 'more than one root element';
      if (!selfClosing) open.push(name);
    }
    position = cursor + (selfClosing ? 2 : 1);
  }
  if (roots === 0) return 'no root element';
  return open.length === 0 ? undefined : `<${open[open.length - 1]}> is never closed`;
}
