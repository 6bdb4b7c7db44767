import type { Legend, LegendEntry } from '../chart-model.js';
import { AXIS_TITLE_FONT_PX, LABEL_FONT_PX, MAX_LEGEND_LABEL_PX, TEXT_COLOUR } from './chart-style.js';
import { px } from './pixel-text.js';
import { MIDDLE_BASELINE_EM } from './plot-box.js';
import { boldTextWidthPx, textWidthPx, truncateToWidth } from './text-width.js';
import { escapeXml } from './xml-text.js';

const ROW_HEIGHT_PX = 16;
const SYMBOL_WIDTH_PX = 16;
const SYMBOL_GAP_PX = 5;
const GAP_BETWEEN_LEGENDS_PX = 12;

export interface LaidOutLegends {
  svg: string;
  widthPx: number;
  heightPx: number;
}

function symbolSvg(entry: LegendEntry, x: number, centreY: number): string {
  if (entry.symbol === 'square') {
    return `<rect x="${px(x + 3)}" y="${px(centreY - 5)}" width="10" height="10" fill="${escapeXml(entry.colour)}"/>`;
  }
  const dash = entry.symbol === 'dashed-line' ? ' stroke-dasharray="3 3"' : '';
  return `<path d="M${px(x)},${px(centreY)}h${SYMBOL_WIDTH_PX}" stroke="${escapeXml(entry.colour)}" stroke-width="2"${dash} fill="none"/>`;
}

/** The legends stacked top to bottom from (left, top): a bold title, then one row per entry. */
export function legendsSvg(legends: readonly Legend[], left: number, top: number): LaidOutLegends {
  const parts: string[] = [];
  let y = top;
  let widthPx = 0;
  for (const legend of legends) {
    if (legend.entries.length === 0) continue;
    if (y > top) y += GAP_BETWEEN_LEGENDS_PX;
    parts.push(`<text x="${px(left)}" y="${px(y + AXIS_TITLE_FONT_PX)}" font-size="${AXIS_TITLE_FONT_PX}" font-weight="bold">${escapeXml(legend.title)}</text>`);
    widthPx = Math.max(widthPx, boldTextWidthPx(legend.title, AXIS_TITLE_FONT_PX));
    y += AXIS_TITLE_FONT_PX + 6;
    for (const entry of legend.entries) {
      const centreY = y + ROW_HEIGHT_PX / 2;
      const label = truncateToWidth(entry.label, MAX_LEGEND_LABEL_PX, LABEL_FONT_PX);
      parts.push(symbolSvg(entry, left, centreY));
      parts.push(`<text x="${px(left + SYMBOL_WIDTH_PX + SYMBOL_GAP_PX)}" y="${px(centreY + LABEL_FONT_PX * MIDDLE_BASELINE_EM)}" font-size="${LABEL_FONT_PX}">${escapeXml(label)}</text>`);
      widthPx = Math.max(widthPx, SYMBOL_WIDTH_PX + SYMBOL_GAP_PX + textWidthPx(label, LABEL_FONT_PX));
      y += ROW_HEIGHT_PX;
    }
  }
  if (parts.length === 0) return { svg: '', widthPx: 0, heightPx: 0 };
  return { svg: `<g class="legend" fill="${TEXT_COLOUR}">${parts.join('')}</g>`, widthPx, heightPx: y - top };
}
