/** The memory store part of the `Store` contract (issue 12), run by `storeContract` on each backend. */
import { describe, expect, it } from 'vitest';
import type { StoreTestHarness } from './contract.js';
import { uid, useMigratedStore } from './fixture.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function storeItemsContract(harness: StoreTestHarness): void {
  describe(`Store items (${harness.name})`, () => {
    const store = useMigratedStore(harness);

    const put = (
      tenantId: string,
      namespace: string[],
      key: string,
      value: Record<string, unknown>,
      more: { ttlMinutes?: number; searchText?: string | null; embedding?: number[] } = {},
    ) => store().putItem({ tenantId, namespace, key, value, searchText: more.searchText === undefined ? JSON.stringify(value) : more.searchText, ...more });

    it('puts, reads, replaces (keeping created_at) and deletes an item, scoped to its tenant', async () => {
      const t = uid('t');
      await put(t, ['memories', 'u1'], 'k', { fact: 'likes tea' });
      const first = await store().getItem(t, ['memories', 'u1'], 'k');
      expect(first).toMatchObject({ tenantId: t, namespace: ['memories', 'u1'], key: 'k', value: { fact: 'likes tea' }, expiresAt: null, ttlMinutes: null });
      await put(t, ['memories', 'u1'], 'k', { fact: 'likes coffee' });
      const second = await store().getItem(t, ['memories', 'u1'], 'k');
      expect(second?.value).toEqual({ fact: 'likes coffee' });
      expect(second?.createdAt).toEqual(first?.createdAt);
      expect(await store().getItem(uid('other'), ['memories', 'u1'], 'k')).toBeUndefined();
      expect(await store().deleteItem(uid('other'), ['memories', 'u1'], 'k')).toBe(false);
      expect(await store().deleteItem(t, ['memories', 'u1'], 'k')).toBe(true);
      expect(await store().getItem(t, ['memories', 'u1'], 'k')).toBeUndefined();
    });

    it('refuses a label with ".", an empty label and an over-long key, naming the field', async () => {
      const t = uid('t');
      await expect(put(t, ['a.b'], 'k', {})).rejects.toThrow(/namespace\[0\]/);
      await expect(put(t, ['a', ''], 'k', {})).rejects.toThrow(/namespace\[1\]/);
      await expect(put(t, ['a'], 'x'.repeat(257), {})).rejects.toThrow(/Invalid key/);
    });

    it('searches a namespace prefix by label, not by string prefix, newest first, with limit and offset', async () => {
      const t = uid('t');
      await put(t, ['docs', 'a'], '1', { n: 1 });
      await put(t, ['docs', 'a', 'deep'], '2', { n: 2 });
      await put(t, ['docs', 'ab'], '3', { n: 3 });
      await put(t, ['docs'], '4', { n: 4 });
      await put(uid('other'), ['docs', 'a'], '5', { n: 5 });
      const under = await store().searchItems(t, { namespacePrefix: ['docs', 'a'], limit: 10, offset: 0 });
      expect(under.map((i) => i.key).sort()).toEqual(['1', '2']);
      const all = await store().searchItems(t, { namespacePrefix: [], limit: 10, offset: 0 });
      expect(all.map((i) => i.key).sort()).toEqual(['1', '2', '3', '4']);
      const page = await store().searchItems(t, { namespacePrefix: ['docs'], limit: 2, offset: 1 });
      expect(page).toHaveLength(2);
    });

    it('filters on value fields (equality and $gt) and matches every word of a text query case-insensitively', async () => {
      const t = uid('t');
      await put(t, ['m'], 'a', { kind: 'pref', n: 1, fact: 'Prefers dark mode' });
      await put(t, ['m'], 'b', { kind: 'pref', n: 5, fact: 'Lives in Lyon' });
      await put(t, ['m'], 'c', { kind: 'note', n: 9, fact: 'dark chocolate' }, { searchText: null });
      expect((await store().searchItems(t, { namespacePrefix: ['m'], filter: { kind: 'pref' }, limit: 10, offset: 0 })).map((i) => i.key).sort()).toEqual([
        'a',
        'b',
      ]);
      expect((await store().searchItems(t, { namespacePrefix: ['m'], filter: { n: { $gt: 3 } }, limit: 10, offset: 0 })).map((i) => i.key).sort()).toEqual([
        'b',
        'c',
      ]);
      // "c" is not indexed: a query never matches it.
      expect((await store().searchItems(t, { namespacePrefix: ['m'], query: 'DARK', limit: 10, offset: 0 })).map((i) => i.key)).toEqual(['a']);
      // Every word must occur, in any order.
      expect((await store().searchItems(t, { namespacePrefix: ['m'], query: 'mode prefers', limit: 10, offset: 0 })).map((i) => i.key)).toEqual(['a']);
      expect(await store().searchItems(t, { namespacePrefix: ['m'], query: 'dark lyon', limit: 10, offset: 0 })).toEqual([]);
    });

    it('ranks a query vector by cosine similarity and reports the score', async () => {
      const t = uid('t');
      await put(t, ['v'], 'x', { fact: 'x' }, { embedding: [1, 0] });
      await put(t, ['v'], 'y', { fact: 'y' }, { embedding: [0, 1] });
      await put(t, ['v'], 'xy', { fact: 'xy' }, { embedding: [1, 1] });
      const hits = await store().searchItems(t, { namespacePrefix: ['v'], query: 'anything', queryVector: [0, 2], limit: 2, offset: 0 });
      expect(hits.map((h) => h.key)).toEqual(['y', 'xy']);
      expect(hits[0]?.score).toBeCloseTo(1);
      expect(hits[1]?.score).toBeCloseTo(Math.SQRT1_2);
    });

    it('lists namespaces with prefix, suffix wildcards, max depth, limit and offset', async () => {
      const t = uid('t');
      await put(t, ['memories', 'u1'], 'k', {});
      await put(t, ['memories', 'u2'], 'k', {});
      await put(t, ['memories', 'u2', 'prefs'], 'k', {});
      await put(t, ['docs', 'u1'], 'k', {});
      expect(await store().listItemNamespaces(t, { limit: 100, offset: 0 })).toEqual([
        ['docs', 'u1'],
        ['memories', 'u1'],
        ['memories', 'u2'],
        ['memories', 'u2', 'prefs'],
      ]);
      expect(await store().listItemNamespaces(t, { prefix: ['memories'], maxDepth: 2, limit: 100, offset: 0 })).toEqual([
        ['memories', 'u1'],
        ['memories', 'u2'],
      ]);
      expect(await store().listItemNamespaces(t, { prefix: ['*', 'u1'], limit: 100, offset: 0 })).toEqual([
        ['docs', 'u1'],
        ['memories', 'u1'],
      ]);
      expect(await store().listItemNamespaces(t, { suffix: ['prefs'], limit: 100, offset: 0 })).toEqual([['memories', 'u2', 'prefs']]);
      expect(await store().listItemNamespaces(t, { limit: 1, offset: 1 })).toEqual([['memories', 'u1']]);
      expect(await store().listItemNamespaces(uid('other'), { limit: 100, offset: 0 })).toEqual([]);
    });

    it('hides an item once its TTL passes, refresh_ttl pushes the expiry forward, and the sweep deletes expired rows', async () => {
      const t = uid('t');
      await put(t, ['ttl'], 'short', { v: 1 }, { ttlMinutes: 0.0005 }); // 30 ms
      await put(t, ['ttl'], 'long', { v: 2 }, { ttlMinutes: 60 });
      const long = await store().getItem(t, ['ttl'], 'long');
      expect(long?.ttlMinutes).toBe(60);
      await sleep(60);
      expect(await store().getItem(t, ['ttl'], 'short')).toBeUndefined();
      expect((await store().searchItems(t, { namespacePrefix: ['ttl'], limit: 10, offset: 0 })).map((i) => i.key)).toEqual(['long']);
      expect(await store().listItemNamespaces(t, { limit: 10, offset: 0 })).toEqual([['ttl']]);
      const refreshed = await store().getItem(t, ['ttl'], 'long', { refreshTtl: true });
      expect(refreshed!.expiresAt!.getTime()).toBeGreaterThan(long!.expiresAt!.getTime());
      expect((await store().getItem(t, ['ttl'], 'long'))?.expiresAt).toEqual(refreshed?.expiresAt);
      expect(await store().sweepExpiredItems(1000)).toBeGreaterThanOrEqual(1);
      // Re-putting the swept key makes a new item.
      await put(t, ['ttl'], 'short', { v: 3 });
      expect((await store().getItem(t, ['ttl'], 'short'))?.value).toEqual({ v: 3 });
    });
  });
}
