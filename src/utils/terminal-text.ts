/**
 * C0 and C1 control characters (escape sequences start with ESC or CSI), DEL, and the Unicode bidirectional overrides
 * that can reorder what a terminal shows. Tab and line feed are handled by the caller (flattened to spaces).
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text a server sent (error messages, hosts, finish reasons, details), made safe to print on a terminal: control
 * sequences are dropped and other control characters become `?`, so a hostile server cannot move the cursor, rewrite earlier lines, set the window title or
 * hide text with escape sequences.
 */
export function terminalSafe(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '?');
}

/** Whole ANSI sequences (CSI such as colours, OSC such as window titles) are dropped rather than shown as `?[0m`. */
// eslint-disable-next-line no-control-regex
const ESCAPE_SEQUENCE = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;
