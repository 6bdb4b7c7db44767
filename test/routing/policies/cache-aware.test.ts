import { describe, expect, it } from 'vitest';
import { ApproximatePrefixTree } from '../../../src/routing/policies/cache-aware/approximate-tree.js';
import { CacheAwarePolicy } from '../../../src/routing/policies/cache-aware/cache-aware-policy.js';
import { PackedText } from '../../../src/routing/policies/cache-aware/packed-text.js';
import { TokenIdsText } from '../../../src/routing/policies/cache-aware/token-ids-text.js';
import { routingKeyFromTokenIds } from '../../../src/routing/routing-key.js';
import { SeededRandom } from '../../../src/utils/random.js';
import { makeWorkers, request } from './worker-fixture.js';

const systemPrompt = (group: number): string => `You are assistant number ${group}. ${'Follow these rules carefully. '.repeat(8)}`;

describe('cache_aware policy', () => {
  it('keeps each prefix group on one worker while load is balanced', () => {
    const policy = new CacheAwarePolicy();
    const workers = makeWorkers(4);
    for (const worker of workers) policy.onWorkerAdded(worker);
    const random = new SeededRandom(3);
    const workerOfGroup = new Map<number, Set<number>>();
    // Each request stays in flight for the next 8 routings, so load is real but never imbalanced.
    const inFlight: (typeof workers)[number][] = [];
    for (let step = 0; step < 400; step++) {
      const group = random.integer(0, 7);
      const chosen = policy.choose(request(`r${step}`, `${systemPrompt(group)}Question ${step}?`), workers);
      expect(chosen).toBeDefined();
      const worker = workers[chosen!.index]!;
      worker.inFlight++;
      inFlight.push(worker);
      if (inFlight.length > 8) inFlight.shift()!.inFlight--;
      const seen = workerOfGroup.get(group) ?? new Set<number>();
      seen.add(chosen!.index);
      workerOfGroup.set(group, seen);
    }
    for (const [group, seen] of workerOfGroup) expect(seen.size, `group ${group}`).toBe(1);
    // New prefixes go to the least-loaded worker, so 8 groups spread over all 4 workers.
    const used = new Set([...workerOfGroup.values()].flatMap((seen) => [...seen]));
    expect(used.size).toBe(4);
  });

  it('routes a text with no held prefix to the least-loaded worker (smg), not the smallest tree', () => {
    const policy = new CacheAwarePolicy();
    const workers = makeWorkers(2);
    for (const worker of workers) policy.onWorkerAdded(worker);
    expect(policy.choose(request('a', 'a'.repeat(100)), workers)?.index).toBe(0);
    workers[0]!.inFlight = 1;
    expect(policy.choose(request('b', 'b'.repeat(10)), workers)?.index).toBe(1);
    workers[1]!.inFlight = 2;
    // Worker 0 holds the larger tree but fewer requests: it takes the miss.
    expect(policy.choose(request('c', 'c'.repeat(10)), workers)?.index).toBe(0);
    expect(policy.treeSize(workers[0]!.url)).toBe(110);
    expect(policy.treeSize(workers[1]!.url)).toBe(10);
  });

  it('falls back to the least-loaded worker only when load is imbalanced past both thresholds', () => {
    const policy = new CacheAwarePolicy({ cacheAware: { balanceAbsThreshold: 64, balanceRelThreshold: 1.5 } });
    const workers = makeWorkers(2);
    for (const worker of workers) policy.onWorkerAdded(worker);
    const prompt = `${systemPrompt(1)}first question`;
    expect(policy.choose(request('warm', prompt), workers)?.index).toBe(0);
    const next = `${systemPrompt(1)}another question`;

    // 135 vs 70: difference 65 > 64 and ratio 1.93 > 1.5, so imbalanced: the least-loaded worker wins over the prefix.
    workers[0]!.inFlight = 135;
    workers[1]!.inFlight = 70;
    expect(policy.choose(request('r1', next), workers)?.index).toBe(1);

    // Difference 64 is not above the absolute threshold: the prefix holder keeps it.
    workers[1]!.inFlight = 0;
    const fresh = new CacheAwarePolicy();
    for (const worker of workers) fresh.onWorkerAdded(worker);
    workers[0]!.inFlight = 0;
    expect(fresh.choose(request('w', prompt), workers)?.index).toBe(0);
    workers[0]!.inFlight = 64;
    expect(fresh.choose(request('r2', next), workers)?.index).toBe(0);

    // 350 vs 250: difference 100 but ratio 1.4 ≤ 1.5, balanced, the prefix wins; 200 vs 100: ratio 2, imbalanced.
    workers[0]!.inFlight = 350;
    workers[1]!.inFlight = 250;
    expect(fresh.choose(request('r3', next), workers)?.index).toBe(0);
    workers[0]!.inFlight = 200;
    workers[1]!.inFlight = 100;
    expect(fresh.choose(request('r4', next), workers)?.index).toBe(1);
  });

  it('follows the prefix only above the cache threshold', () => {
    const policy = new CacheAwarePolicy({ cacheAware: { cacheThreshold: 0.5 } });
    const workers = makeWorkers(2);
    for (const worker of workers) policy.onWorkerAdded(worker);
    expect(policy.choose(request('a', 'x'.repeat(40)), workers)?.index).toBe(0);
    workers[0]!.inFlight = 1;
    // Shares 40 of 100 characters (0.4 ≤ 0.5): goes to the least-loaded worker instead.
    expect(policy.choose(request('b', `${'x'.repeat(40)}${'y'.repeat(60)}`), workers)?.index).toBe(1);
    // Shares 40 of 60 (0.67 > 0.5); both workers now hold the 40 x's and worker 1 used them last, so it wins.
    expect(policy.choose(request('c', `${'x'.repeat(40)}${'z'.repeat(20)}`), workers)?.index).toBe(1);
  });

  it('forgets a removed worker and never sends a prefix to an unhealthy holder', () => {
    const policy = new CacheAwarePolicy();
    const workers = makeWorkers(2);
    for (const worker of workers) policy.onWorkerAdded(worker);
    const prompt = 'p'.repeat(200);
    expect(policy.choose(request('a', prompt), workers)?.index).toBe(0);
    workers[0]!.healthy = false;
    expect(policy.choose(request('b', prompt), workers)?.index).toBe(1);
    workers[0]!.healthy = true;
    policy.onWorkerRemoved(workers[1]!);
    expect(policy.treeSize(workers[1]!.url)).toBe(0);
  });

  it('answers with the worker objects of the call, when a router passes new ones for the same workers', () => {
    const policy = new CacheAwarePolicy();
    const first = makeWorkers(2);
    for (const worker of first) policy.onWorkerAdded(worker);
    const prompt = 'q'.repeat(200);
    expect(policy.choose(request('a', prompt), first)).toBe(first[0]);
    const second = makeWorkers(2);
    second[0]!.inFlight = 1;
    // The prefix holder, as the second call's object (its inFlight is the one the router now knows).
    expect(policy.choose(request('b', prompt), second)).toBe(second[0]);
  });

  it('keeps every tree within maxTreeSize characters', () => {
    const maxTreeSize = 2_000;
    const policy = new CacheAwarePolicy({ cacheAware: { maxTreeSize } });
    const workers = makeWorkers(3);
    for (const worker of workers) policy.onWorkerAdded(worker);
    const random = new SeededRandom(8);
    for (let step = 0; step < 3_000; step++) {
      const text = `${systemPrompt(random.integer(0, 30))}${random.nextUint32().toString(36)}`;
      policy.choose(request(`r${step}`, text), workers);
      for (const worker of workers) expect(policy.treeSize(worker.url)).toBeLessThanOrEqual(maxTreeSize);
    }
    // Eviction does not empty a tree: it stays close to the bound.
    expect(policy.treeSize(workers[0]!.url)).toBeGreaterThan(maxTreeSize / 2);
  });
});

describe('approximate prefix tree', () => {
  it('finds the longest prefix, including one that ends inside a node', () => {
    const tree = new ApproximatePrefixTree();
    tree.insert('hello world', 'a');
    tree.insert('hello there', 'b');
    expect(tree.prefixMatch('hello wo', () => true)).toEqual({ matchedLength: 8, tenant: 'a' });
    expect(tree.prefixMatch('hello th', () => true)).toEqual({ matchedLength: 8, tenant: 'b' });
    expect(tree.prefixMatch('hello xyz', () => true).matchedLength).toBe(6);
    expect(tree.prefixMatch('hello world', (tenant) => tenant === 'b').matchedLength).toBe(6);
    expect(tree.sizeOf('a')).toBe(11);
    expect(tree.sizeOf('b')).toBe(11);
  });

  it('evicts least recently used leaves first and drops nodes nobody uses', () => {
    const tree = new ApproximatePrefixTree();
    tree.insert('aaaa1111', 'w');
    tree.insert('bbbb2222', 'w');
    tree.insert('aaaa3333', 'w');
    expect(tree.sizeOf('w')).toBe(20);
    tree.evictTenant('w', 16);
    // The leaf '1111' was used least recently (its parent 'aaaa' was touched again by the third insert).
    expect(tree.sizeOf('w')).toBe(16);
    expect(tree.prefixMatch('aaaa1111', () => true).matchedLength).toBe(4);
    tree.evictTenant('w', 10);
    // Next oldest is the whole 'bbbb2222' branch; 'aaaa' + '3333' stay.
    expect(tree.sizeOf('w')).toBe(8);
    expect(tree.prefixMatch('bbbb2222', () => true).matchedLength).toBe(0);
    expect(tree.prefixMatch('aaaa3333', () => true).matchedLength).toBe(8);
    expect(tree.nodeCount()).toBe(2);
  });

  it('packs a text of the key alphabet two characters to a byte, from any offset, and nothing else', () => {
    const key = '[31999,0,17,-2.5, 4]';
    for (const from of [0, 1, 2, 7, key.length - 1, key.length]) {
      const packed = PackedText.pack(key, from);
      expect(packed?.length).toBe(key.length - from);
      const back = Array.from({ length: key.length - from }, (_, index) => String.fromCharCode(packed!.charCodeAt(index))).join('');
      expect(back).toBe(key.slice(from));
    }
    // Outside the alphabet, including characters whose low byte is a digit's code (U+0130, U+0231) or that are
    // one byte in Latin-1 (U+00E9): held as they are.
    for (const text of ['[1,2]a', '[1,\u0130]', '[\u0231]', '[1,\u00e92]', '\u{1F600}[1]']) expect(PackedText.pack(text, 0)).toBeUndefined();
    // A long key packed first leaves bytes behind; a shorter text that is not all ASCII must not read them.
    expect(PackedText.pack(`[${'1234,'.repeat(400)}5]`, 0)?.length).toBe(2003);
    expect(PackedText.pack('[12,\u0130\u0130\u0130]', 2)).toBeUndefined();
  });

  it('matches, splits, sizes and evicts token-id keys (packed, or views of the ids) as the same texts held as they are', () => {
    const random = new SeededRandom(5);
    const shared = Array.from({ length: 40 }, () => random.integer(0, 31_999));
    const idLists = Array.from({ length: 60 }, (_, index) => {
      const own = Array.from({ length: random.integer(10, 60) }, () => random.integer(0, 31_999));
      // Every key starts with the same id, so the reference's extra first character sits in a node all keys share.
      return Uint16Array.from(index % 3 === 0 ? [7, ...own] : [7, ...shared.slice(0, random.integer(0, 40)), ...own]);
    });
    const keys = idLists.map((ids) => routingKeyFromTokenIds(ids));
    // A text with one character outside the packed alphabet is held as it is: the reference.
    const plain = (key: string): string => `x${key}`;
    const packed = new ApproximatePrefixTree();
    const views = new ApproximatePrefixTree();
    const reference = new ApproximatePrefixTree();
    keys.forEach((key, index) => {
      packed.insert(key, `t${index % 4}`);
      views.insert(key, `t${index % 4}`, idLists[index]);
      reference.insert(plain(key), `t${index % 4}`);
    });
    for (const key of [...keys, routingKeyFromTokenIds([7, ...shared]), `${keys[5]!.slice(0, -3)}`, '1 2 3', `${keys[7]!} 5`]) {
      const want = reference.prefixMatch(plain(key), (tenant) => tenant !== 't1');
      for (const tree of [packed, views]) {
        const got = tree.prefixMatch(key, (tenant) => tenant !== 't1');
        expect({ ...got, matchedLength: got.matchedLength + 1 }).toEqual(want);
      }
    }
    for (const tree of [packed, views]) {
      expect(tree.nodeCount()).toBe(reference.nodeCount());
      for (const tenant of ['t0', 't1', 't2', 't3']) expect(tree.sizeOf(tenant)).toBe(reference.sizeOf(tenant) - 1);
      tree.evictTenant('t2', 500);
    }
    reference.evictTenant('t2', 501);
    for (const tree of [packed, views]) {
      expect(tree.sizeOf('t2')).toBe(reference.sizeOf('t2') - 1);
      for (const key of keys) expect(tree.prefixMatch(key, () => true).matchedLength + 1).toBe(reference.prefixMatch(plain(key), () => true).matchedLength);
    }
  });

  it('reads a view of token ids as the text of the ids joined by spaces, from any offset and cut anywhere', () => {
    const random = new SeededRandom(9);
    const ids = Uint32Array.from({ length: 50 }, (_, index) => (index === 3 ? 0 : index === 4 ? 2 ** 31 - 1 : random.integer(0, 10 ** random.integer(0, 6))));
    const key = routingKeyFromTokenIds(ids);
    for (let from = 0; from < key.length; from += random.integer(1, 9)) {
      const view = TokenIdsText.at(ids, from, key.length)!;
      const text = key.slice(from);
      expect(view.length).toBe(text.length);
      expect(view.head(view.length)).toBe(text);
      expect(view.charCodeAt(0)).toBe(text.charCodeAt(0));
      const cut = random.integer(0, text.length - 1);
      expect(view.tail(cut).head(text.length - cut)).toBe(text.slice(cut));
      expect(view.charCodeAt(cut)).toBe(text.charCodeAt(cut));
      expect(view.sharedPrefixLength(key, from)).toBe(text.length);
      const other = `${key.slice(0, from + cut)}x`;
      expect(view.sharedPrefixLength(other, from)).toBe(cut);
      expect(view.sharedPrefixLength(key.slice(0, from + cut), from)).toBe(cut);
    }
    // Ids whose text is not plain digits, and a key that was not made of these ids, get no view.
    expect(TokenIdsText.at([1, 2.5], 0, 5)).toBeUndefined();
    expect(TokenIdsText.at([1, -2], 0, 4)).toBeUndefined();
    expect(TokenIdsText.at([1, 2 ** 31], 0, 12)).toBeUndefined();
    expect(TokenIdsText.at([1, 22], 0, 5)).toBeUndefined();
    expect(TokenIdsText.at([1, 22], 0, 4)?.head(4)).toBe('1 22');
  });

  it('removes a tenant entirely while others keep shared nodes', () => {
    const tree = new ApproximatePrefixTree();
    tree.insert('shared prefix one', 'a');
    tree.insert('shared prefix two', 'b');
    tree.removeTenant('a');
    expect(tree.sizeOf('a')).toBe(0);
    expect(tree.prefixMatch('shared prefix one', () => true)).toEqual({ matchedLength: 14, tenant: 'b' });
    expect(tree.nodeCount()).toBe(2);
  });
});
