/** The plot area of a run report's charts (axes, titles and legends come around it). */
export const PLOT_WIDTH_PX = 640;
export const PLOT_HEIGHT_PX = 220;
export const TIME_AXIS_TITLE = 'time since t0 (s)';
