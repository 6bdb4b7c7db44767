import type { ChartModel, Mark } from '../chart-model.js';
import { gridSvg, X_AXIS_HEIGHT_PX, xAxisSvg, yBandAxisSvg, yLabelsWidthPx, yLinearAxisSvg } from './axes.js';
import { bandScale } from './band-scale.js';
import { barMarkSvg } from './bar-mark.js';
import { AXIS_TITLE_FONT_PX, FONT_FAMILY, LABEL_FONT_PX, MAX_BAND_LABEL_PX, MUTED_TEXT_COLOUR, PADDING_PX, SUBTITLE_FONT_PX, TEXT_COLOUR, TITLE_FONT_PX } from './chart-style.js';
import { dataExtents } from './data-extent.js';
import { legendsSvg } from './legend.js';
import { linearScale } from './linear-scale.js';
import { lineMarkSvg } from './line-mark.js';
import type { DrawnMark, MarkContext } from './mark-context.js';
import { ruleMarkSvg } from './rule-mark.js';
import { textWidthPx, truncateToWidth } from './text-width.js';
import { escapeXml } from './xml-text.js';

/** Pixels per tick interval the axes aim for: room for a label like "12,500" between ticks, and a readable grid. */
const X_PX_PER_TICK = 80;
const Y_PX_PER_TICK = 40;
const GAP_BELOW_TITLE_PX = 12;
const GAP_BEFORE_LEGEND_PX = 18;

function drawMark(mark: Mark, context: MarkContext): DrawnMark {
  if (mark.kind === 'line') return lineMarkSvg(mark, context);
  if (mark.kind === 'rule') return ruleMarkSvg(mark, context);
  return barMarkSvg(mark, context);
}

function titleSvg(chart: ChartModel): { svg: string; heightPx: number } {
  let svg = `<text x="${PADDING_PX}" y="${PADDING_PX + TITLE_FONT_PX}" font-size="${TITLE_FONT_PX}" font-weight="bold" fill="${TEXT_COLOUR}">${escapeXml(chart.title)}</text>`;
  let heightPx = TITLE_FONT_PX;
  if (chart.subtitle !== undefined) {
    heightPx += SUBTITLE_FONT_PX + 5;
    svg += `<text x="${PADDING_PX}" y="${PADDING_PX + heightPx}" font-size="${SUBTITLE_FONT_PX}" fill="${MUTED_TEXT_COLOUR}">${escapeXml(chart.subtitle)}</text>`;
  }
  return { svg, heightPx };
}

/**
 * The chart as a standalone SVG document (no script, nothing fetched, white background): title, plot with grid,
 * axes and marks, legends to the right of the plot. Margins follow from the text they hold, so tick labels, legends
 * and value labels are never cut off.
 */
export function renderChartSvg(chart: ChartModel): string {
  const title = titleSvg(chart);
  const plotTop = PADDING_PX + title.heightPx + GAP_BELOW_TITLE_PX;
  const plotBottom = plotTop + chart.plotHeightPx;
  const extents = dataExtents(chart.marks);
  const y =
    chart.y.kind === 'linear'
      ? linearScale({
          extent: extents.y,
          ...(chart.y.domain === undefined ? {} : { fixedDomain: chart.y.domain }),
          includeZero: chart.y.includeZero ?? true,
          rangeStartPx: plotBottom,
          rangeEndPx: plotTop,
          tickIntervals: chart.plotHeightPx / Y_PX_PER_TICK,
        })
      : undefined;
  const band = chart.y.kind === 'band' ? bandScale(chart.y.categories, plotTop, chart.plotHeightPx) : undefined;
  const yLabels = chart.y.kind === 'linear' ? (y?.ticks ?? []).map((tick) => tick.label) : chart.y.showLabels ? chart.y.categories.map((category) => truncateToWidth(category, MAX_BAND_LABEL_PX, LABEL_FONT_PX)) : [];
  const yTitleX = PADDING_PX + AXIS_TITLE_FONT_PX;
  const left = yTitleX + 12 + yLabelsWidthPx(yLabels, (text) => textWidthPx(text, LABEL_FONT_PX));
  const x = linearScale({
    extent: extents.x,
    ...(chart.x.domain === undefined ? {} : { fixedDomain: chart.x.domain }),
    includeZero: chart.x.includeZero ?? true,
    rangeStartPx: left,
    rangeEndPx: left + chart.plotWidthPx,
    tickIntervals: chart.plotWidthPx / X_PX_PER_TICK,
  });
  const plot = { left, top: plotTop, width: chart.plotWidthPx, height: chart.plotHeightPx };
  const context: MarkContext = { plot, x, y, band };
  const marks = chart.marks.map((mark) => drawMark(mark, context));
  const lastTick = x.ticks[x.ticks.length - 1];
  const lastTickOverflowPx = lastTick === undefined ? 0 : x.position(lastTick.value) + textWidthPx(lastTick.label, LABEL_FONT_PX) / 2 - (left + chart.plotWidthPx);
  const rightOfPlot = left + chart.plotWidthPx + Math.max(0, lastTickOverflowPx, ...marks.map((mark) => mark.rightOverflowPx));
  const legends = legendsSvg(chart.legends, rightOfPlot + GAP_BEFORE_LEGEND_PX, plotTop);
  const widthPx = Math.ceil((legends.widthPx > 0 ? rightOfPlot + GAP_BEFORE_LEGEND_PX + legends.widthPx : rightOfPlot) + PADDING_PX);
  const heightPx = Math.ceil(Math.max(plotBottom + X_AXIS_HEIGHT_PX, plotTop + legends.heightPx) + PADDING_PX);
  const yAxis = chart.y.kind === 'linear' && y ? yLinearAxisSvg(plot, y, chart.y.title, yTitleX) : chart.y.kind === 'band' && band ? yBandAxisSvg(plot, chart.y.categories, band, chart.y.showLabels, chart.y.title, yTitleX) : '';
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${widthPx}" height="${heightPx}" viewBox="0 0 ${widthPx} ${heightPx}" font-family="${FONT_FAMILY}">` +
    `<title>${escapeXml(chart.title)}</title>` +
    `<rect width="${widthPx}" height="${heightPx}" fill="white"/>` +
    title.svg +
    gridSvg(plot, x, y) +
    xAxisSvg(plot, x, chart.x.title) +
    yAxis +
    marks.map((mark) => mark.svg).join('') +
    legends.svg +
    `</svg>`
  );
}
