import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.js';
import { createBuiltinRoutingPolicy } from '../../../src/routing/policies/registry.js';
import { CONTROL_TOKEN_HEADER } from '../../../src/routing/router/control-auth.js';
import { startRouter, type RouterHandle } from '../../../src/routing/router/index.js';
import { fetchAllTapRecords } from '../../../src/routing/tap/tap-records-client.js';
import { TAP_RECORDS_PATH } from '../../../src/routing/tap/index.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../scripted-upstream.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function upstream(name: string): Promise<ScriptedUpstream> {
  const started = await startScriptedUpstream(name);
  closers.push(() => started.close());
  return started;
}

const TOKEN = 'd'.repeat(64);
const withToken = { [CONTROL_TOKEN_HEADER]: TOKEN };

async function router(workerUrls: string[], traceClock?: ManualClock): Promise<RouterHandle> {
  const handle = await startRouter({
    workerUrls,
    controlToken: TOKEN,
    policy: createBuiltinRoutingPolicy('round_robin', { seed: 1 }),
    healthCheckIntervalMs: 60_000,
    ...(traceClock === undefined ? {} : { traceClock }),
  });
  closers.push(() => handle.close());
  return handle;
}

async function generate(baseUrl: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<void> {
  const answer = await request(`${baseUrl}/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ text: 'hello', sampling_params: { max_new_tokens: 3 }, stream: false, ...body }),
  });
  await answer.body.dump();
}

describe('builtin router tracing itself', () => {
  it('records when it sent each request and to which worker, on its clock, in the taps\' format and at their path', async () => {
    const [first, second] = [await upstream('u0'), await upstream('u1')];
    const clock = new ManualClock(0, 1_700_000_000_000);
    const handle = await router([first.url, second.url], clock);
    clock.setTo(1_000);
    await generate(handle.url, { rid: 'from-body' }); // round robin: u0; the id read from the body's rid
    clock.setTo(2_500);
    await generate(handle.url, {}, { 'x-request-id': 'from-header' }); // u1
    await generate(handle.url, {}); // no id at all: nothing to join a record to, so nothing is kept
    const traced = await fetchAllTapRecords(handle.url, TOKEN);
    expect(traced.overhead).toBeUndefined();
    expect(traced.records).toEqual([
      { requestId: 'from-body', routerSendTime: 1_700_000_001, host: first.url, hostIndex: 0, httpStatus: 200 },
      { requestId: 'from-header', routerSendTime: 1_700_000_002.5, host: second.url, hostIndex: 1, httpStatus: 200 },
    ]);
    // Paged from an offset, and forgotten on DELETE (after a warmup).
    expect((await request(`${handle.url}${TAP_RECORDS_PATH}?offset=1`, { headers: withToken }).then((answer) => answer.body.json())) as { records: unknown[] }).toMatchObject({ total: 2, records: [{ requestId: 'from-header' }] });
    await (await request(`${handle.url}${TAP_RECORDS_PATH}`, { method: 'DELETE', headers: withToken })).body.dump();
    expect((await fetchAllTapRecords(handle.url, TOKEN)).records).toEqual([]);
  });

  it('keeps a record per attempt, so a retried request shows where it was finally served', async () => {
    const [doomed, live] = [await upstream('u0'), await upstream('u1')];
    const clock = new ManualClock();
    const handle = await router([doomed.url, live.url], clock);
    await doomed.close(); // no health check has noticed yet: the first attempt gets no answer
    await generate(handle.url, { rid: 'retried' });
    const { records } = await fetchAllTapRecords(handle.url, TOKEN);
    expect(records.map((record) => [record.host, record.httpStatus])).toEqual([
      [doomed.url, undefined],
      [live.url, 200],
    ]);
  });

  it('keeps nothing and serves no trace unless asked to (a router started by hand)', async () => {
    const only = await upstream('u0');
    const handle = await router([only.url]);
    await generate(handle.url, { rid: 'untraced' });
    // The path is not the router's: with the token (every /_servelab/ path needs it), it goes to the worker.
    const answer = await request(`${handle.url}${TAP_RECORDS_PATH}`, { headers: withToken });
    await answer.body.dump();
    expect(only.seen.map((seen) => seen.path)).toContain(TAP_RECORDS_PATH);
  });
});
