import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { failure, startTwoTenantGrpc, type TwoTenantGrpc } from './testing.js';

// The store over gRPC: the same operations as HTTP /store (store-api.ts), per tenant.
let t: TwoTenantGrpc;
beforeAll(async () => {
  t = await startTwoTenantGrpc();
});
afterAll(async () => t.close());

describe('store over gRPC', () => {
  it('puts, gets, searches, lists namespaces and deletes an item', async () => {
    const ns = ['users', 'u1', 'facts'];
    await t.acme.putStoreItem({ namespace: ns, key: 'color', valueJson: JSON.stringify({ text: 'likes green tea' }) });
    await t.acme.putStoreItem({ namespace: ['users', 'u1', 'prefs'], key: 'lang', valueJson: JSON.stringify({ text: 'speaks French' }) });

    const got = await t.acme.getStoreItem({ namespace: ns, key: 'color' });
    expect(got.item?.namespace).toEqual(ns);
    expect(got.item?.key).toBe('color');
    expect(JSON.parse(got.item!.valueJson)).toEqual({ text: 'likes green tea' });
    expect(got.item!.createdAtMs).toBeGreaterThan(0n);

    const found = await t.acme.searchStoreItems({ namespacePrefix: ['users', 'u1'], filterJson: JSON.stringify({ text: 'speaks French' }) });
    expect(found.items.map((i) => i.key)).toEqual(['lang']);
    const byQuery = await t.acme.searchStoreItems({ namespacePrefix: ['users'], query: 'green tea' });
    expect(byQuery.items.map((i) => i.key)).toContain('color');

    const spaces = await t.acme.listStoreNamespaces({ prefix: ['users', '*'], maxDepth: 3 });
    expect(spaces.namespaces.map((n) => n.labels).sort()).toEqual([
      ['users', 'u1', 'facts'],
      ['users', 'u1', 'prefs'],
    ]);

    // As HTTP: the item is the one the HTTP API returns.
    const http = await t.gw.app.inject({ method: 'GET', url: '/store/items?namespace=users.u1.facts&key=color', headers: { 'x-api-key': 'acme-key' } });
    expect(http.json()).toMatchObject({ key: 'color', value: { text: 'likes green tea' } });

    await t.acme.deleteStoreItem({ namespace: ns, key: 'color' });
    expect((await t.acme.getStoreItem({ namespace: ns, key: 'color' })).item).toBeUndefined();
  });

  it("keeps tenants apart: another tenant's item is absent, and deleting it leaves it alone", async () => {
    await t.acme.putStoreItem({ namespace: ['secrets'], key: 'k', valueJson: JSON.stringify({ v: 1 }) });
    expect((await t.globex.getStoreItem({ namespace: ['secrets'], key: 'k' })).item).toBeUndefined();
    expect((await t.globex.searchStoreItems({ namespacePrefix: ['secrets'] })).items).toEqual([]);
    expect((await t.globex.listStoreNamespaces({ prefix: ['secrets'] })).namespaces).toEqual([]);
    await t.globex.deleteStoreItem({ namespace: ['secrets'], key: 'k' });
    expect(JSON.parse((await t.acme.getStoreItem({ namespace: ['secrets'], key: 'k' })).item!.valueJson)).toEqual({ v: 1 });
  });

  it('stores an item with a TTL and unindexed', async () => {
    await t.acme.putStoreItem({ namespace: ['ttl'], key: 'k', valueJson: JSON.stringify({ v: 2 }), ttlMinutes: 5, indexDisabled: true });
    const row = await t.gw.store.getItem('acme', ['ttl'], 'k');
    expect(row?.value).toEqual({ v: 2 });
    expect(row?.expiresAt).toBeInstanceOf(Date);
  });

  it('names the invalid field with INVALID_ARGUMENT', async () => {
    const dotted = await failure(t.acme.putStoreItem({ namespace: ['a.b'], key: 'k', valueJson: '{}' }));
    expect(dotted.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(dotted.details).toContain('namespace.0');
    const notObject = await failure(t.acme.putStoreItem({ namespace: ['a'], key: 'k', valueJson: '[1]' }));
    expect(notObject.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(notObject.details).toContain('value_json: expected a JSON object');
    const badJson = await failure(t.acme.putStoreItem({ namespace: ['a'], key: 'k', valueJson: '{' }));
    expect(badJson.details).toContain('value_json: is not valid JSON');
    const noKey = await failure(t.acme.getStoreItem({ namespace: ['a'], key: '' }));
    expect(noKey.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(noKey.details).toContain('key');
    const noNamespace = await failure(t.acme.deleteStoreItem({ namespace: [], key: 'k' }));
    expect(noNamespace.details).toContain('namespace: expected at least one label');
    const both = await failure(t.acme.putStoreItem({ namespace: ['a'], key: 'k', valueJson: '{}', index: ['text'], indexDisabled: true }));
    expect(both.details).toContain('index');
    const limit = await failure(t.acme.searchStoreItems({ limit: 5000 }));
    expect(limit.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(limit.details).toContain('limit');
    const ttl = await failure(t.acme.putStoreItem({ namespace: ['a'], key: 'k', valueJson: '{}', ttlMinutes: -1 }));
    expect(ttl.details).toContain('ttl_minutes');
    const depth = await failure(t.acme.listStoreNamespaces({ maxDepth: 100 }));
    expect(depth.details).toContain('max_depth');
  });
});
