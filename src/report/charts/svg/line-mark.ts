import type { LineMark, LineSeries } from '../chart-model.js';
import { clamp, type DrawnMark, type MarkContext } from './mark-context.js';
import { px } from './pixel-text.js';
import { escapeXml } from './xml-text.js';

/**
 * The path of one series. A point with a NaN or infinite coordinate is skipped and breaks the line (no segment is
 * drawn across the gap). A step-after line holds each value until the next point's x; a point that repeats the
 * previous y only extends the step, so it is left out (the next point's horizontal move covers it) unless it is the
 * last one, which says where the line ends.
 */
function seriesPath(series: LineSeries, step: boolean, context: MarkContext): { d: string; points: [number, number][] } {
  const { plot, x, y } = context;
  const bottom = plot.top + plot.height;
  const right = plot.left + plot.width;
  const commands: string[] = [];
  const points: [number, number][] = [];
  const count = Math.min(series.xs.length, series.ys.length);
  let open = false;
  let lastY = '';
  let pendingX: string | undefined;
  for (let index = 0; index < count; index++) {
    const xValue = series.xs[index] as number;
    const yValue = series.ys[index] as number;
    if (!Number.isFinite(xValue) || !Number.isFinite(yValue)) {
      if (pendingX !== undefined) commands.push(`H${pendingX}`);
      pendingX = undefined;
      open = false;
      continue;
    }
    const xPx = clamp(x.position(xValue), plot.left, right);
    const yPx = clamp(y?.position(yValue) ?? bottom, plot.top, bottom);
    points.push([xPx, yPx]);
    const xText = px(xPx);
    const yText = px(yPx);
    if (!open) {
      commands.push(`M${xText},${yText}`);
      open = true;
    } else if (!step) {
      commands.push(`L${xText},${yText}`);
    } else if (yText === lastY) {
      pendingX = xText;
      continue;
    } else {
      commands.push(`H${xText}V${yText}`);
    }
    pendingX = undefined;
    lastY = yText;
  }
  if (pendingX !== undefined) commands.push(`H${pendingX}`);
  return { d: commands.join(''), points };
}

/** Each series as one path in its colour, with dots at its points when asked (or when it has a single point). */
export function lineMarkSvg(mark: LineMark, context: MarkContext): DrawnMark {
  const parts: string[] = [];
  for (const series of mark.series) {
    const colour = escapeXml(series.colour);
    const { d, points } = seriesPath(series, mark.interpolation === 'step-after', context);
    if (points.length === 0) continue;
    parts.push(`<path d="${d}" stroke="${colour}" stroke-width="${mark.strokeWidthPx}" fill="none" stroke-linejoin="round"/>`);
    const radius = mark.pointRadiusPx ?? (points.length === 1 ? 2.5 : 0);
    if (radius > 0) for (const [xPx, yPx] of points) parts.push(`<circle cx="${px(xPx)}" cy="${px(yPx)}" r="${radius}" fill="${colour}"/>`);
  }
  return { svg: `<g class="mark-line">${parts.join('')}</g>`, rightOverflowPx: 0 };
}
