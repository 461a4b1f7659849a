import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import type { SqlStore } from '@agentloop/store';
import { startTestGateway, type TestGateway } from '../testing/index.js';

// The official SDK's `client.store.*` against the gateway, two tenants, and a fake
// OpenAI-compatible embeddings endpoint for semantic search.

/** One dimension per word: a text's vector counts these words (enough to rank by meaning in a test). */
const VOCABULARY = ['tea', 'coffee', 'lyon', 'paris'];
const embed = (text: string) =>
  VOCABULARY.map(
    (w) =>
      text
        .toLowerCase()
        .split(/\W+/)
        .filter((t) => t === w).length,
  );

let embeddings: Server;
const embeddingInputs: string[] = [];
let gw: TestGateway;
let semanticGw: TestGateway;
let acme: Client;
let globex: Client;
let semantic: Client;
let apiUrl: string;

const listen = async (gateway: TestGateway) => {
  await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(gateway.app.server.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  embeddings = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { input, model } = JSON.parse(body) as { input: string[]; model: string };
      embeddingInputs.push(...input);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', model, data: input.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) })) }));
    });
  });
  await new Promise<void>((r) => embeddings.listen(0, '127.0.0.1', r));
  const embeddingsUrl = `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}/v1`;

  gw = await startTestGateway({ env: { AGENTLOOP_API_KEYS: 'acme-key:acme,globex-key:globex' }, orchestrator: false });
  apiUrl = await listen(gw);
  acme = new Client({ apiUrl, apiKey: 'acme-key' });
  globex = new Client({ apiUrl, apiKey: 'globex-key' });
  semanticGw = await startTestGateway({
    env: { AGENTLOOP_API_KEYS: 'k:acme', STORE_EMBEDDINGS_MODEL: 'fake-embed', STORE_EMBEDDINGS_BASE_URL: embeddingsUrl, STORE_EMBEDDINGS_DIMS: '4' },
    orchestrator: false,
  });
  semantic = new Client({ apiUrl: await listen(semanticGw), apiKey: 'k' });
});
afterAll(async () => {
  await gw?.close();
  await semanticGw?.close();
  await new Promise((r) => embeddings?.close(r));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('store through the official SDK', () => {
  it('puts, gets, searches, lists and deletes items', async () => {
    await acme.store.putItem(['memories', 'u1'], 'drink', { fact: 'prefers tea' });
    await acme.store.putItem(['memories', 'u1', 'work'], 'city', { fact: 'works in Lyon', year: 2024 });
    await acme.store.putItem(['memories', 'u2'], 'drink', { fact: 'prefers coffee' });

    const item = await acme.store.getItem(['memories', 'u1'], 'drink');
    expect(item).toMatchObject({ namespace: ['memories', 'u1'], key: 'drink', value: { fact: 'prefers tea' } });
    // The wire names are created_at / updated_at (the SDK copies them to createdAt / updatedAt).
    const wire = item as unknown as { created_at: string; updated_at: string };
    expect(Date.parse(wire.created_at)).not.toBeNaN();
    expect(item!.updatedAt).toBe(wire.updated_at);

    const under = await acme.store.searchItems(['memories', 'u1']);
    expect(under.items.map((i) => i.key).sort()).toEqual(['city', 'drink']);
    const filtered = await acme.store.searchItems(['memories'], { filter: { year: 2024 } });
    expect(filtered.items.map((i) => `${i.namespace.join('/')}:${i.key}`)).toEqual(['memories/u1/work:city']);
    const text = await acme.store.searchItems(['memories'], { query: 'COFFEE' });
    expect(text.items.map((i) => i.namespace[1])).toEqual(['u2']);

    const namespaces = await acme.store.listNamespaces({ prefix: ['memories'], maxDepth: 2 });
    expect(namespaces.namespaces).toEqual([
      ['memories', 'u1'],
      ['memories', 'u2'],
    ]);

    await acme.store.deleteItem(['memories', 'u2'], 'drink');
    expect(await acme.store.getItem(['memories', 'u2'], 'drink')).toBeNull();
  });

  it("keeps tenants apart: another tenant's item is absent and cannot be deleted", async () => {
    await acme.store.putItem(['secrets'], 'k', { v: 'acme only' });
    expect(await globex.store.getItem(['secrets'], 'k')).toBeNull();
    expect((await globex.store.searchItems(['secrets'])).items).toEqual([]);
    expect((await globex.store.listNamespaces()).namespaces).toEqual([]);
    await globex.store.deleteItem(['secrets'], 'k');
    expect((await acme.store.getItem(['secrets'], 'k'))?.value).toEqual({ v: 'acme only' });
    // The same namespace and key in another tenant is another item.
    await globex.store.putItem(['secrets'], 'k', { v: 'globex' });
    expect((await acme.store.getItem(['secrets'], 'k'))?.value).toEqual({ v: 'acme only' });
  });

  it('an item whose TTL passed is gone from get and search at once', async () => {
    await acme.store.putItem(['ttl'], 'brief', { v: 1 }, { ttl: 0.001 }); // 60 ms
    await acme.store.putItem(['ttl'], 'lasting', { v: 2 }, { ttl: 10 });
    expect((await acme.store.getItem(['ttl'], 'brief'))?.value).toEqual({ v: 1 });
    await sleep(150);
    expect(await acme.store.getItem(['ttl'], 'brief')).toBeNull();
    expect((await acme.store.searchItems(['ttl'], { refreshTtl: true })).items.map((i) => i.key)).toEqual(['lasting']);
    expect((await acme.store.getItem(['ttl'], 'lasting', { refreshTtl: true }))?.value).toEqual({ v: 2 });
  });

  it('ranks a query by embedding similarity when an embeddings endpoint is configured, embedding only indexed fields', async () => {
    await semantic.store.putItem(['m'], 'a', { fact: 'lives in Paris', note: 'tea' }, { index: ['fact'] });
    await semantic.store.putItem(['m'], 'b', { fact: 'drinks tea every morning, tea please' });
    await semantic.store.putItem(['m'], 'c', { fact: 'coffee tea' });
    await semantic.store.putItem(['m'], 'hidden', { fact: 'tea tea tea' }, { index: false });
    expect(embeddingInputs).toContain('lives in Paris');
    const res = await semantic.store.searchItems(['m'], { query: 'tea' });
    expect(res.items.map((i) => i.key)).toEqual(['b', 'c', 'a']);
    const scores = res.items.map((i) => (i as unknown as { score: number }).score);
    expect(scores[0]).toBeCloseTo(1);
    expect(scores[1]).toBeCloseTo(Math.SQRT1_2);
    expect(scores[2]).toBe(0);
  });
});

describe('expired item sweep', () => {
  it('deletes the rows of expired items in the background', async () => {
    const swept = await startTestGateway({ env: { STORE_SWEEP_INTERVAL_MS: '20' }, orchestrator: false });
    try {
      const db = (swept.store as SqlStore).db;
      const rows = async () => (await db.selectFrom('store_items').select('item_key').execute()).map((r) => r.item_key);
      await swept.store.putItem({ tenantId: 'default', namespace: ['n'], key: 'brief', value: {}, ttlMinutes: 0.0005, searchText: null });
      await swept.store.putItem({ tenantId: 'default', namespace: ['n'], key: 'kept', value: {}, searchText: null });
      expect((await rows()).sort()).toEqual(['brief', 'kept']);
      for (let i = 0; i < 500 && (await rows()).length > 1; i++) await sleep(20);
      expect(await rows()).toEqual(['kept']);
    } finally {
      await swept.close();
    }
  });
});

describe('store request validation', () => {
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${apiUrl}${path}`, {
      method,
      headers: { 'x-api-key': 'acme-key', 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { detail: string; errors?: { path: string }[] } }));

  it('refuses a label with "." or an empty one, naming the field', async () => {
    const dotted = await call('PUT', '/store/items', { namespace: ['a.b'], key: 'k', value: {} });
    expect(dotted.status).toBe(422);
    expect(dotted.body.errors?.map((e) => e.path)).toEqual(['body.namespace.0']);
    const empty = await call('POST', '/store/items/search', { namespace_prefix: ['a', ''] });
    expect(empty.status).toBe(422);
    expect(empty.body.errors?.map((e) => e.path)).toEqual(['body.namespace_prefix.1']);
  });

  it('refuses a value that is not an object, a missing key and a value over the size bound', async () => {
    const notObject = await call('PUT', '/store/items', { namespace: ['a'], key: 'k', value: [1] });
    expect(notObject.body.errors?.map((e) => e.path)).toEqual(['body.value']);
    const noKey = await call('PUT', '/store/items', { namespace: ['a'], value: {} });
    expect(noKey.body.errors?.map((e) => e.path)).toEqual(['body.key']);
    const big = await call('PUT', '/store/items', { namespace: ['a'], key: 'k', value: { text: 'x'.repeat(300 * 1024) } });
    expect(big.status).toBe(422);
    expect(big.body.detail).toMatch(/body\.value: at most 262144 bytes/);
  });

  it('GET without a namespace is a 422 naming query.namespace', async () => {
    const res = await call('GET', '/store/items?key=k');
    expect(res.status).toBe(422);
    expect(res.body.errors?.map((e) => e.path)).toEqual(['query.namespace']);
  });
});
