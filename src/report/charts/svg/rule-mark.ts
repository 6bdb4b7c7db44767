import type { Rule, RuleMark } from '../chart-model.js';
import { LABEL_FONT_PX } from './chart-style.js';
import { type DrawnMark, type MarkContext } from './mark-context.js';
import { px } from './pixel-text.js';
import { TOP_BASELINE_EM } from './plot-box.js';
import { textWidthPx } from './text-width.js';
import { escapeXml } from './xml-text.js';

const LABEL_OFFSET_PX = 3;

/** A vertical rule's label: at the top of the plot to its right, or rotated to read upward along it from the bottom. */
function verticalLabel(rule: Rule & { label: string }, xPx: number, mark: RuleMark, context: MarkContext): { svg: string; overflowPx: number } {
  const { plot } = context;
  const text = escapeXml(rule.label);
  const fill = escapeXml(rule.colour);
  if (mark.labelPlacement === 'along-bottom') {
    const anchorY = plot.top + plot.height - LABEL_OFFSET_PX;
    return { svg: `<text transform="translate(${px(xPx - LABEL_OFFSET_PX - 1)},${px(anchorY)}) rotate(-90)" fill="${fill}">${text}</text>`, overflowPx: 0 };
  }
  const x = xPx + LABEL_OFFSET_PX;
  const svg = `<text x="${px(x)}" y="${px(plot.top + 2 + LABEL_FONT_PX * TOP_BASELINE_EM)}" fill="${fill}">${text}</text>`;
  return { svg, overflowPx: x + textWidthPx(rule.label, LABEL_FONT_PX) - (plot.left + plot.width) };
}

/** A horizontal rule's label, right-aligned just above it at the plot's right end. */
function horizontalLabel(rule: Rule & { label: string }, yPx: number, context: MarkContext): string {
  const { plot } = context;
  return `<text x="${px(plot.left + plot.width - LABEL_OFFSET_PX)}" y="${px(yPx - LABEL_OFFSET_PX)}" fill="${escapeXml(rule.colour)}" text-anchor="end">${escapeXml(rule.label)}</text>`;
}

/** Dashed lines across the plot at each rule's value, with their labels; a rule with no finite value is skipped. */
export function ruleMarkSvg(mark: RuleMark, context: MarkContext): DrawnMark {
  const { plot, x, y } = context;
  const lines: string[] = [];
  const labels: string[] = [];
  let rightOverflowPx = 0;
  const dash = mark.dashPx.length === 0 ? '' : ` stroke-dasharray="${mark.dashPx.join(' ')}"`;
  for (const rule of mark.rules) {
    if (!Number.isFinite(rule.value)) continue;
    const stroke = `stroke="${escapeXml(rule.colour)}" stroke-width="${mark.strokeWidthPx}"${dash}`;
    if (mark.axis === 'x') {
      const xPx = x.position(rule.value);
      lines.push(`<path d="M${px(xPx)},${px(plot.top)}v${px(plot.height)}" ${stroke}/>`);
      if (rule.label !== undefined) {
        const label = verticalLabel({ ...rule, label: rule.label }, xPx, mark, context);
        labels.push(label.svg);
        rightOverflowPx = Math.max(rightOverflowPx, label.overflowPx);
      }
    } else if (y) {
      const yPx = y.position(rule.value);
      lines.push(`<path d="M${px(plot.left)},${px(yPx)}h${px(plot.width)}" ${stroke}/>`);
      if (rule.label !== undefined) labels.push(horizontalLabel({ ...rule, label: rule.label }, yPx, context));
    }
  }
  const text = labels.length === 0 ? '' : `<g font-size="${LABEL_FONT_PX}">${labels.join('')}</g>`;
  return { svg: `<g class="mark-rule" fill="none">${lines.join('')}${text}</g>`, rightOverflowPx };
}
