/** Rows of equal height, one per category, top to bottom in the given order. */
export interface BandScale {
  rowHeightPx: number;
  /** The y of the row's centre, or undefined for a category not on the axis. */
  centre(category: string): number | undefined;
}

export function bandScale(categories: readonly string[], topPx: number, heightPx: number): BandScale {
  const rowHeightPx = heightPx / Math.max(1, categories.length);
  const centres = new Map<string, number>();
  categories.forEach((category, index) => {
    if (!centres.has(category)) centres.set(category, topPx + (index + 0.5) * rowHeightPx);
  });
  return { rowHeightPx, centre: (category) => centres.get(category) };
}
