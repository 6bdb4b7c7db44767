import { Command } from 'commander';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../../src/clock/clock.js';
import { registerTapsCommand, runTapsCommand } from '../../../src/cli/commands/taps.js';
import { createBuiltinRoutingPolicy } from '../../../src/routing/policies/registry.js';
import { startRouter } from '../../../src/routing/router/index.js';
import { clearTapRecords, fetchTapRecords, startTaps } from '../../../src/routing/tap/index.js';
import { sseEvents, startScriptedUpstreams, type ScriptedUpstream } from '../scripted-upstream.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

const upstreams = (count: number, gapMs = 0): Promise<ScriptedUpstream[]> => startScriptedUpstreams(count, gapMs, closers);

const generate = (url: string, requestId: string | undefined, body: Record<string, unknown> = {}) =>
  request(`${url}/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(requestId === undefined ? {} : { 'x-request-id': requestId }) },
    body: JSON.stringify({ text: 'hi', stream: true, ...body }),
  });

describe('tracing taps', () => {
  it('record routerSendTime from the injected clock and the host for each request id, passing streams through', async () => {
    const all = await upstreams(2, 5);
    const clock = new ManualClock(1_000, 1_700_000_000_000);
    const taps = await startTaps({ upstreamUrls: all.map((upstream) => upstream.url), clock });
    closers.push(() => taps.close());
    expect(taps.tapUrls).toHaveLength(2);

    const first = await generate(taps.tapUrls[1]!, 'req-a');
    expect(await first.body.text()).toBe(sseEvents('u1').join(''));
    clock.advanceBy(250);
    const second = await generate(taps.tapUrls[0]!, undefined, { rid: 'req-b', stream: false });
    expect(await second.body.json()).toMatchObject({ served_by: 'u0' });
    // No request id: passes through without a record (health checks look like this).
    const health = await request(`${taps.tapUrls[0]}/health`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();

    expect(taps.records()).toEqual([
      { requestId: 'req-a', routerSendTime: 1_700_000_001, host: all[1]!.url, hostIndex: 1, httpStatus: 200 },
      { requestId: 'req-b', routerSendTime: 1_700_000_001.25, host: all[0]!.url, hostIndex: 0, httpStatus: 200 },
    ]);
    expect(all[1]!.seen[0]?.headers['x-request-id']).toBe('req-a');
    // The manual clock does not move inside the tap, so its measured overhead is exactly zero here.
    expect(taps.overhead().inboundMs).toMatchObject({ count: 2, maxMs: 0 });
  });

  it('with the system clock, stamp routerSendTime in epoch seconds between the send and the answer', async () => {
    const [upstream] = await upstreams(1);
    const taps = await startTaps({ upstreamUrls: [upstream!.url], clock: systemClock });
    closers.push(() => taps.close());
    const sentAt = systemClock.nowEpochSeconds();
    await (await generate(taps.tapUrls[0]!, 'timed', { stream: false })).body.dump();
    const answeredAt = systemClock.nowEpochSeconds();
    const [record] = taps.records();
    expect(record?.routerSendTime).toBeGreaterThanOrEqual(sentAt);
    expect(record?.routerSendTime).toBeLessThanOrEqual(answeredAt);
    expect(taps.overhead().inboundMs.count).toBe(1);
    expect(taps.overhead().inboundMs.maxMs).toBeLessThan(answeredAt * 1000 - sentAt * 1000);
  });

  it('serve records and overhead over HTTP on the first tap, with offset and clearing', async () => {
    const all = await upstreams(2);
    const taps = await startTaps({ upstreamUrls: all.map((upstream) => upstream.url), clock: new ManualClock() });
    closers.push(() => taps.close());
    for (const [index, url] of taps.tapUrls.entries()) await (await generate(url, `r${index}`, { stream: false })).body.dump();
    const fetched = await fetchTapRecords(taps.tapUrls[0]!);
    expect(fetched.total).toBe(2);
    expect(fetched.records.map((record) => record.requestId)).toEqual(['r0', 'r1']);
    expect(fetched.overhead?.relayMs.count).toBe(2);
    expect((await fetchTapRecords(taps.tapUrls[0]!, 1)).records.map((record) => record.requestId)).toEqual(['r1']);
    await clearTapRecords(taps.tapUrls[0]!);
    expect((await fetchTapRecords(taps.tapUrls[0]!)).total).toBe(0);
  });

  it('behind the builtin router, tell which server took each request, and pass a dead server on as a dead connection', async () => {
    const all = await upstreams(3);
    const taps = await startTaps({ upstreamUrls: all.map((upstream) => upstream.url), clock: new ManualClock() });
    closers.push(() => taps.close());
    const router = await startRouter({ workerUrls: taps.tapUrls, policy: createBuiltinRoutingPolicy('round_robin'), healthCheckIntervalMs: 60_000 });
    closers.push(() => router.close());
    await all[0]!.close();
    for (let index = 0; index < 3; index++) await (await generate(router.url, `q${index}`, { stream: false })).body.text();
    const records = taps.records();
    // q0 went to the dead server first (recorded by its tap, no status) and was retried on the next one.
    const forwards = records.filter((record) => record.requestId === 'q0');
    expect(forwards).toHaveLength(2);
    expect(forwards[0]).toMatchObject({ hostIndex: 0 });
    expect(forwards[0]!.httpStatus).toBeUndefined();
    expect(forwards[1]!.hostIndex).not.toBe(0);
    expect(forwards[1]!.httpStatus).toBe(200);
    // Every attempt on the dead server is a router error and a tap record without a status, and nothing more.
    const deadForwards = records.filter((record) => record.hostIndex === 0);
    expect(deadForwards.every((record) => record.httpStatus === undefined)).toBe(true);
    expect(router.workers()[0]?.errors).toBe(deadForwards.length);
    const served = new Map(records.filter((record) => record.httpStatus === 200).map((record) => [record.requestId, record.host]));
    expect([...served.values()].every((host) => host !== all[0]!.url)).toBe(true);
    expect(served.size).toBe(3);
  });

  it('prints the ready line with the tap URLs as a JSON array, from repeated --upstream flags', async () => {
    const all = await upstreams(2);
    const program = new Command().exitOverride();
    registerTapsCommand(program);
    const parsed = program.commands[0]!.parseOptions(['--upstream', all[0]!.url, '--upstream', all[1]!.url]);
    expect(parsed.unknown).toEqual([]);
    const options = program.commands[0]!.opts<{ upstream: string[]; host: string }>();
    expect(options.upstream).toEqual([all[0]!.url, all[1]!.url]);
    const lines: string[] = [];
    const taps = await runTapsCommand(options, (line) => lines.push(line));
    closers.push(() => taps.close());
    const match = /^servelab taps listening (\[.*\])$/.exec(lines[0] ?? '');
    expect(JSON.parse(match?.[1] ?? 'null')).toEqual(taps.tapUrls);
  });
});
