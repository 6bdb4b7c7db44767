import { describe, expect, it } from 'vitest';
import { compileRowWriter, fieldAccess } from '../../src/report/compile-row-writer.js';
import { ServelabError } from '../../src/errors/servelab-error.js';

describe('compileRowWriter', () => {
  it('runs the generated statements with their bindings', () => {
    const write = compileRowWriter<(out: string[], record: Record<string, unknown>) => void>('write', ['out', 'record'], [`out.push(prefix + ${fieldAccess('record', 'hostName')});`], { prefix: '> ' });
    const out: string[] = [];
    write(out, { hostName: 'node-a' });
    expect(out).toEqual(['> node-a']);
  });

  it('refuses a field name that is not a plain identifier', () => {
    expect(() => fieldAccess('record', 'a); process.exit(1); (b')).toThrow(ServelabError);
    expect(() => fieldAccess('record', 'queue-time')).toThrow(/not a plain identifier/);
  });
});
