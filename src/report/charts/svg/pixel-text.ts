/**
 * A coordinate as SVG text, to a hundredth of a pixel: finer says nothing at zoom 2 and only makes the file longer
 * (a concurrency chart has thousands of points).
 */
export function px(value: number): string {
  return String(Math.round(value * 100) / 100);
}
