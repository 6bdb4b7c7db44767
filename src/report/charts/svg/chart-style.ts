/** Fonts, sizes and greys shared by every part of a chart, so that axes, legends and labels read as one design. */
export const FONT_FAMILY = 'DejaVu Sans, Helvetica, Arial, sans-serif';
export const TITLE_FONT_PX = 13;
export const SUBTITLE_FONT_PX = 11;
export const AXIS_TITLE_FONT_PX = 11;
export const LABEL_FONT_PX = 10;
export const TEXT_COLOUR = '#333333';
export const MUTED_TEXT_COLOUR = '#666666';
export const AXIS_COLOUR = '#888888';
export const GRID_COLOUR = '#e6e6e6';
export const TICK_LENGTH_PX = 5;
/** Space around the whole chart. */
export const PADDING_PX = 10;
/** Longest category label on a band axis, and longest legend label, before they are cut with an ellipsis. */
export const MAX_BAND_LABEL_PX = 220;
export const MAX_LEGEND_LABEL_PX = 360;
