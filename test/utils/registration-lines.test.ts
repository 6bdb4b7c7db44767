import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readRegistrationLines } from '../../src/utils/registration-lines.js';

/** Feeds `chunks` through a stream read by readRegistrationLines; resolves with what it heard, in order. */
async function heard(chunks: (string | Buffer)[]): Promise<string[]> {
  const input = new PassThrough();
  const events: string[] = [];
  readRegistrationLines(input, { register: (id) => events.push(`register ${id}`), unregister: (id) => events.push(`unregister ${id}`) });
  const ended = new Promise((resolve) => input.on('end', resolve));
  for (const chunk of chunks) input.write(chunk);
  input.end();
  await ended;
  return events;
}

describe('readRegistrationLines', () => {
  it('hands on each +ID and -ID line, in order, with the id as written', async () => {
    expect(await heard(['+12\n-12\n+7\n', '+x1\n'])).toEqual(['register 12', 'unregister 12', 'register 7', 'register x1']);
  });

  it('joins a line split across chunks, even inside a multi-byte character, and holds back an unfinished last line', async () => {
    const euro = Buffer.from('€');
    expect(await heard(['+1', '23\n-', '4', '5\n', Buffer.concat([Buffer.from('+a'), euro.subarray(0, 1)]), Buffer.concat([euro.subarray(1), Buffer.from('\n+99')])])).toEqual([
      'register 123',
      'unregister 45',
      'register a€',
    ]);
  });

  it('passes over lines that start with neither sign, and empty lines', async () => {
    expect(await heard(['12\n\n =3\n+\n-8\n'])).toEqual(['register ', 'unregister 8']);
  });
});
