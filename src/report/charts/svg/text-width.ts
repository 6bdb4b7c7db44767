/**
 * Estimated advance width of text in DejaVu Sans (the font the PNGs are drawn with; Helvetica and Arial are
 * narrower), used to lay out margins and legends before any renderer measures it. Widths are fractions of the font
 * size, by character class; a slight overestimate only leaves a little more room.
 */
const NARROW = new Set([...'ijl.,:;\'|!()[]{} /-`ftrI']);
const WIDE = new Set([...'mwMWOQGDHNU@%&']);

export function textWidthPx(text: string, fontSizePx: number): number {
  let em = 0;
  for (const character of text) {
    if (NARROW.has(character)) em += 0.36;
    else if (WIDE.has(character)) em += 0.86;
    else if (character >= 'A' && character <= 'Z') em += 0.72;
    else em += 0.62;
  }
  return em * fontSizePx;
}

/** Bold DejaVu Sans is about a tenth wider than regular. */
export function boldTextWidthPx(text: string, fontSizePx: number): number {
  return textWidthPx(text, fontSizePx) * 1.1;
}

/** The text cut to fit maxWidthPx, with an ellipsis where it was cut. */
export function truncateToWidth(text: string, maxWidthPx: number, fontSizePx: number): string {
  if (textWidthPx(text, fontSizePx) <= maxWidthPx) return text;
  const characters = [...text];
  while (characters.length > 0 && textWidthPx(`${characters.join('')}…`, fontSizePx) > maxWidthPx) characters.pop();
  return `${characters.join('')}…`;
}
