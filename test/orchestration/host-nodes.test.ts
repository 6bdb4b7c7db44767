import { describe, expect, it } from 'vitest';
import { nameHostNodes } from '../../src/orchestration/host-nodes.js';
import type { RequestRecord } from '../../src/types/record.js';

const record = (host: string | undefined): RequestRecord => ({ requestId: 'r', scheduledTime: 0, success: true, warmup: false, ...(host === undefined ? {} : { host }) }) as RequestRecord;

describe('nameHostNodes', () => {
  it('names the node of each record\'s server by its URL, a trailing slash aside', () => {
    const records = [record('http://127.0.0.1:3001'), record('http://127.0.0.1:3002/'), record(undefined), record('http://elsewhere:1')];
    nameHostNodes(records, [
      { url: 'http://127.0.0.1:3001/', node: 'n1' },
      { url: 'http://127.0.0.1:3002', node: 'n2' },
    ]);
    expect(records.map((entry) => entry.hostNode)).toEqual(['n1', 'n2', undefined, undefined]);
  });

  it('leaves every record without a node when the servers ran on this host', () => {
    const records = [record('http://127.0.0.1:3001')];
    nameHostNodes(records, [{ url: 'http://127.0.0.1:3001' }]);
    expect(records[0]?.hostNode).toBeUndefined();
    expect('hostNode' in (records[0] as object)).toBe(false);
  });
});
