import { AXIS_COLOUR, AXIS_TITLE_FONT_PX, GRID_COLOUR, LABEL_FONT_PX, MAX_BAND_LABEL_PX, TEXT_COLOUR, TICK_LENGTH_PX } from './chart-style.js';
import type { BandScale } from './band-scale.js';
import type { LinearScale } from './linear-scale.js';
import { px } from './pixel-text.js';
import { MIDDLE_BASELINE_EM, TOP_BASELINE_EM, type PlotBox } from './plot-box.js';
import { truncateToWidth } from './text-width.js';
import { escapeXml } from './xml-text.js';

const LABEL_GAP_PX = 3;

/** Light lines at every tick of the linear axes, behind the marks, to read values off the plot. */
export function gridSvg(plot: PlotBox, x: LinearScale, y: LinearScale | undefined): string {
  const lines: string[] = [];
  for (const tick of x.ticks) lines.push(`M${px(x.position(tick.value))},${px(plot.top)}v${px(plot.height)}`);
  for (const tick of y?.ticks ?? []) lines.push(`M${px(plot.left)},${px(y?.position(tick.value) ?? 0)}h${px(plot.width)}`);
  return lines.length === 0 ? '' : `<path d="${lines.join('')}" stroke="${GRID_COLOUR}" stroke-width="1" fill="none"/>`;
}

/** The x axis along the bottom of the plot: line, ticks, labels and its title centred below. */
export function xAxisSvg(plot: PlotBox, x: LinearScale, title: string): string {
  const bottom = plot.top + plot.height;
  const ticks = x.ticks.map((tick) => `M${px(x.position(tick.value))},${px(bottom)}v${TICK_LENGTH_PX}`).join('');
  const labelY = bottom + TICK_LENGTH_PX + LABEL_GAP_PX + LABEL_FONT_PX * TOP_BASELINE_EM;
  const labels = x.ticks.map((tick) => `<text x="${px(x.position(tick.value))}" y="${px(labelY)}">${escapeXml(tick.label)}</text>`).join('');
  const titleY = labelY + LABEL_FONT_PX * 0.3 + LABEL_GAP_PX * 2 + AXIS_TITLE_FONT_PX;
  return (
    `<g class="x-axis"><path d="M${px(plot.left)},${px(bottom)}h${px(plot.width)}${ticks}" stroke="${AXIS_COLOUR}" fill="none"/>` +
    `<g font-size="${LABEL_FONT_PX}" fill="${TEXT_COLOUR}" text-anchor="middle">${labels}</g>` +
    `<text x="${px(plot.left + plot.width / 2)}" y="${px(titleY)}" font-size="${AXIS_TITLE_FONT_PX}" font-weight="bold" fill="${TEXT_COLOUR}" text-anchor="middle">${escapeXml(title)}</text></g>`
  );
}

/** Height below the plot that xAxisSvg draws into. */
export const X_AXIS_HEIGHT_PX = TICK_LENGTH_PX + LABEL_GAP_PX + LABEL_FONT_PX * (TOP_BASELINE_EM + 0.3) + LABEL_GAP_PX * 2 + AXIS_TITLE_FONT_PX + 3;

/** The y title, rotated, with its baseline at titleX and centred on the plot's height. */
function yTitleSvg(plot: PlotBox, title: string, titleX: number): string {
  const centreY = plot.top + plot.height / 2;
  return `<text transform="translate(${px(titleX)},${px(centreY)}) rotate(-90)" font-size="${AXIS_TITLE_FONT_PX}" font-weight="bold" fill="${TEXT_COLOUR}" text-anchor="middle">${escapeXml(title)}</text>`;
}

function yLabelsSvg(plot: PlotBox, labels: readonly { y: number; text: string }[]): string {
  const x = plot.left - TICK_LENGTH_PX - LABEL_GAP_PX;
  const texts = labels.map((label) => `<text x="${px(x)}" y="${px(label.y + LABEL_FONT_PX * MIDDLE_BASELINE_EM)}">${escapeXml(label.text)}</text>`).join('');
  return `<g font-size="${LABEL_FONT_PX}" fill="${TEXT_COLOUR}" text-anchor="end">${texts}</g>`;
}

/** The y axis along the left of a linear plot. */
export function yLinearAxisSvg(plot: PlotBox, y: LinearScale, title: string, titleX: number): string {
  const ticks = y.ticks.map((tick) => `M${px(plot.left)},${px(y.position(tick.value))}h-${TICK_LENGTH_PX}`).join('');
  return (
    `<g class="y-axis"><path d="M${px(plot.left)},${px(plot.top)}v${px(plot.height)}${ticks}" stroke="${AXIS_COLOUR}" fill="none"/>` +
    yLabelsSvg(plot, y.ticks.map((tick) => ({ y: y.position(tick.value), text: tick.label }))) +
    yTitleSvg(plot, title, titleX) +
    '</g>'
  );
}

/** The y axis of band rows: a line, and each category's name beside its row unless hidden. */
export function yBandAxisSvg(plot: PlotBox, categories: readonly string[], band: BandScale, showLabels: boolean, title: string, titleX: number): string {
  const labels = showLabels ? bandLabels(categories, band) : [];
  return (
    `<g class="y-axis"><path d="M${px(plot.left)},${px(plot.top)}v${px(plot.height)}" stroke="${AXIS_COLOUR}" fill="none"/>` +
    yLabelsSvg(plot, labels) +
    yTitleSvg(plot, title, titleX) +
    '</g>'
  );
}

function bandLabels(categories: readonly string[], band: BandScale): { y: number; text: string }[] {
  return [...new Set(categories)].map((category) => ({ y: band.centre(category) as number, text: truncateToWidth(category, MAX_BAND_LABEL_PX, LABEL_FONT_PX) }));
}

/** Room the y labels take left of the plot, ticks and gap included. */
export function yLabelsWidthPx(labels: readonly string[], widthOf: (text: string) => number): number {
  return labels.length === 0 ? 0 : Math.max(...labels.map(widthOf)) + TICK_LENGTH_PX + LABEL_GAP_PX;
}
