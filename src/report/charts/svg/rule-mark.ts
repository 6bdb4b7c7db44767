import type { Rule, RuleMark } from '../chart-model.js';
import { LABEL_FONT_PX } from './chart-style.js';
import { type DrawnMark, type MarkContext } from './mark-context.js';
import { px } from './pixel-text.js';
import { TOP_BASELINE_EM } from './plot-box.js';
import { textWidthPx } from './text-width.js';
import { escapeXml } from './xml-text.js';

const LABEL_OFFSET_PX = 3;

/** How far glyphs reach from a rotated label's baseline: the ascent to the left, the descent to the right. */
const ASCENT_PX = LABEL_FONT_PX * 0.8;
const DESCENT_PX = LABEL_FONT_PX * 0.25;

/**
 * Baselines for labels rotated to read upward along their rules, in the rules' order from left to right: each sits
 * just left of its rule, unless that would cross the y axis or the previous label; then it moves right of its rule,
 * and further right until it clears the previous label (close percentiles would otherwise print over each other).
 */
function alongBottomBaselines(positionsPx: readonly number[], plotLeftPx: number): number[] {
  let usedUpToPx = plotLeftPx;
  return positionsPx.map((xPx) => {
    let baseline = xPx - LABEL_OFFSET_PX - DESCENT_PX;
    if (baseline - ASCENT_PX < usedUpToPx) baseline = Math.max(xPx + LABEL_OFFSET_PX + ASCENT_PX, usedUpToPx + ASCENT_PX + 1);
    usedUpToPx = baseline + DESCENT_PX;
    return baseline;
  });
}

/** Vertical space between two stacked top labels. */
const TOP_ROW_GAP_PX = 2;

/**
 * Rows for labels at the top of the plot, each to its rule's right, in the rules' order from left to right: a label
 * goes in the first row where it clears the labels already there, so close events ("crash node 1", "restore node 1")
 * stack instead of printing over each other.
 */
export function topLabelRows(entries: readonly { xPx: number; widthPx: number }[]): number[] {
  const rowEndsPx: number[] = [];
  return entries.map(({ xPx, widthPx }) => {
    const startPx = xPx + LABEL_OFFSET_PX;
    let row = rowEndsPx.findIndex((endPx) => startPx > endPx + LABEL_OFFSET_PX);
    if (row === -1) row = rowEndsPx.length;
    rowEndsPx[row] = startPx + widthPx;
    return row;
  });
}

/** Labels at the top of the plot, to their rules' right, stacked by topLabelRows; returns how far they reach past the plot. */
function topLabels(rules: readonly { rule: Rule & { label: string }; xPx: number }[], context: MarkContext): { svg: string; overflowPx: number } {
  const { plot } = context;
  const sorted = [...rules].sort((a, b) => a.xPx - b.xPx);
  const widths = sorted.map(({ rule }) => textWidthPx(rule.label, LABEL_FONT_PX));
  const rows = topLabelRows(sorted.map(({ xPx }, index) => ({ xPx, widthPx: widths[index] as number })));
  let overflowPx = 0;
  const svg = sorted
    .map(({ rule, xPx }, index) => {
      const x = xPx + LABEL_OFFSET_PX;
      const y = plot.top + 2 + LABEL_FONT_PX * TOP_BASELINE_EM + (rows[index] as number) * (LABEL_FONT_PX + TOP_ROW_GAP_PX);
      overflowPx = Math.max(overflowPx, x + (widths[index] as number) - (plot.left + plot.width));
      return `<text x="${px(x)}" y="${px(y)}" fill="${escapeXml(rule.colour)}">${escapeXml(rule.label)}</text>`;
    })
    .join('');
  return { svg, overflowPx };
}

/** Labels rotated along their rules from the bottom of the plot, placed by alongBottomBaselines. */
function alongBottomLabels(rules: readonly { rule: Rule & { label: string }; xPx: number }[], context: MarkContext): { svg: string; overflowPx: number } {
  const { plot } = context;
  const sorted = [...rules].sort((a, b) => a.xPx - b.xPx);
  const baselines = alongBottomBaselines(sorted.map((entry) => entry.xPx), plot.left);
  const anchorY = plot.top + plot.height - LABEL_OFFSET_PX;
  const svg = sorted
    .map(({ rule }, index) => `<text transform="translate(${px(baselines[index] as number)},${px(anchorY)}) rotate(-90)" fill="${escapeXml(rule.colour)}">${escapeXml(rule.label)}</text>`)
    .join('');
  const last = baselines[baselines.length - 1];
  return { svg, overflowPx: last === undefined ? 0 : last + DESCENT_PX - (plot.left + plot.width) };
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
  const alongBottom: { rule: Rule & { label: string }; xPx: number }[] = [];
  const atTop: { rule: Rule & { label: string }; xPx: number }[] = [];
  const dash = mark.dashPx.length === 0 ? '' : ` stroke-dasharray="${mark.dashPx.join(' ')}"`;
  for (const rule of mark.rules) {
    if (!Number.isFinite(rule.value)) continue;
    const stroke = `stroke="${escapeXml(rule.colour)}" stroke-width="${mark.strokeWidthPx}"${dash}`;
    if (mark.axis === 'x') {
      const xPx = x.position(rule.value);
      lines.push(`<path d="M${px(xPx)},${px(plot.top)}v${px(plot.height)}" ${stroke}/>`);
      if (rule.label === undefined) continue;
      if (mark.labelPlacement === 'along-bottom') {
        alongBottom.push({ rule: { ...rule, label: rule.label }, xPx });
      } else {
        atTop.push({ rule: { ...rule, label: rule.label }, xPx });
      }
    } else if (y) {
      const yPx = y.position(rule.value);
      lines.push(`<path d="M${px(plot.left)},${px(yPx)}h${px(plot.width)}" ${stroke}/>`);
      if (rule.label !== undefined) labels.push(horizontalLabel({ ...rule, label: rule.label }, yPx, context));
    }
  }
  if (atTop.length > 0) {
    const placed = topLabels(atTop, context);
    labels.push(placed.svg);
    rightOverflowPx = Math.max(rightOverflowPx, placed.overflowPx);
  }
  if (alongBottom.length > 0) {
    const placed = alongBottomLabels(alongBottom, context);
    labels.push(placed.svg);
    rightOverflowPx = Math.max(rightOverflowPx, placed.overflowPx);
  }
  // A white halo behind each label keeps it readable where a line or the grid crosses it.
  const text = labels.length === 0 ? '' : `<g font-size="${LABEL_FONT_PX}" stroke="white" stroke-width="3" stroke-linejoin="round" paint-order="stroke">${labels.join('')}</g>`;
  return { svg: `<g class="mark-rule" fill="none">${lines.join('')}${text}</g>`, rightOverflowPx };
}
