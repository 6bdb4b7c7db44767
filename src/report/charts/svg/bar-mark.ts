import type { BarMark } from '../chart-model.js';
import { LABEL_FONT_PX, TEXT_COLOUR } from './chart-style.js';
import { type DrawnMark, type MarkContext } from './mark-context.js';
import { px } from './pixel-text.js';
import { MIDDLE_BASELINE_EM } from './plot-box.js';
import { textWidthPx } from './text-width.js';
import { escapeXml } from './xml-text.js';

const LABEL_OFFSET_PX = 3;
/** Share of a row's height a bar fills when the mark does not fix its thickness: a gap tells the rows apart. */
const DEFAULT_FILL_FRACTION = 0.8;

/** Each bar as a rectangle in its row from startX to endX, its label after its end; a bar off the axis is skipped. */
export function barMarkSvg(mark: BarMark, context: MarkContext): DrawnMark {
  const { plot, x, band } = context;
  if (!band) return { svg: '', rightOverflowPx: 0 };
  const thicknessPx = mark.thicknessPx ?? band.rowHeightPx * DEFAULT_FILL_FRACTION;
  const rects: string[] = [];
  const labels: string[] = [];
  let rightOverflowPx = 0;
  for (const bar of mark.bars) {
    const centre = band.centre(bar.category);
    if (centre === undefined || !Number.isFinite(bar.startX) || !Number.isFinite(bar.endX)) continue;
    const [startPx, endPx] = [x.position(bar.startX), x.position(bar.endX)];
    const left = Math.min(startPx, endPx);
    rects.push(`<rect x="${px(left)}" y="${px(centre - thicknessPx / 2)}" width="${px(Math.abs(endPx - startPx))}" height="${px(thicknessPx)}" fill="${escapeXml(bar.colour)}"/>`);
    if (bar.label !== undefined) {
      const labelX = Math.max(startPx, endPx) + LABEL_OFFSET_PX;
      labels.push(`<text x="${px(labelX)}" y="${px(centre + LABEL_FONT_PX * MIDDLE_BASELINE_EM)}">${escapeXml(bar.label)}</text>`);
      rightOverflowPx = Math.max(rightOverflowPx, labelX + textWidthPx(bar.label, LABEL_FONT_PX) - (plot.left + plot.width));
    }
  }
  const text = labels.length === 0 ? '' : `<g font-size="${LABEL_FONT_PX}" fill="${TEXT_COLOUR}">${labels.join('')}</g>`;
  return { svg: `<g class="mark-bar">${rects.join('')}${text}</g>`, rightOverflowPx };
}
