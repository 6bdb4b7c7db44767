import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { terminalSafe } from '../../src/utils/terminal-text.js';
import { fullyTracedRecord, recordAt, runOf } from '../analysis/records.js';

describe('terminal output of server-sent text (issue 11)', () => {
  it('drops escape sequences and replaces other control characters', () => {
    expect(terminalSafe('\u001b[2J\u001b[31mred\u001b[0m')).toBe('red');
    expect(terminalSafe('\u001b]0;owned title\u0007after')).toBe('after');
    expect(terminalSafe('a\rb\u0008c\u009bd\u202eevil')).toBe('a?b?c?d?evil');
    expect(terminalSafe('line one\nline two\ttabbed')).toBe('line one\nline two\ttabbed');
  });

  it('prints a hostile error message and host without their control characters', () => {
    const hostile = recordAt({
      scheduledTime: 1,
      arrivalTime: 1,
      finishTime: 1.1,
      success: false,
      error: 'server_error',
      errorMessage: 'boom\u001b[2J\u001b[1;1Hfake summary\r',
      host: 'http://127.0.0.1:1\u001b[8m',
    });
    const run = runOf([fullyTracedRecord(0, { host: 'http://127.0.0.1:2' }), hostile], { testLevel: 'routing' });
    const text = formatTerminalSummary(run, summarize(run));
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain('boomfake summary');
  });
});
