/** The plot area inside the chart, in pixels from the chart's top-left corner. */
export interface PlotBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** Baseline offsets that place text by its middle or its top without relying on dominant-baseline support. */
export const MIDDLE_BASELINE_EM = 0.35;
export const TOP_BASELINE_EM = 0.8;
