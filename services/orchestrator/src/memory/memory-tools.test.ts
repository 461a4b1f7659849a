import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStore, StoreItems, type Store } from '@agentloop/store';
import { memoryNamespace, runMemoryTool, runUserId, type MemoryToolName } from './memory-tools.js';
import { TenantMemoryStore } from './tenant-store.js';
import { runMemory } from './run-memory.js';

let store: Store;
let items: StoreItems;
beforeAll(async () => {
  store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  items = new StoreItems({ store });
});
afterAll(async () => store?.close());

const memoryOf = (tenantId: string, userId: string | null) => ({ store: new TenantMemoryStore(items, tenantId), userId: async () => userId });
let n = 0;
const call = async (tenantId: string, userId: string | null, name: MemoryToolName, args: Record<string, unknown>) => {
  const msg = await runMemoryTool({ id: `call-${n++}`, name, args }, memoryOf(tenantId, userId));
  return { status: msg.status, body: JSON.parse(msg.content as string) as Record<string, unknown> };
};

describe('memory tools', () => {
  it('recalls a fact for the same user of the same tenant only', async () => {
    const saved = await call('acme', 'u1', 'remember', { fact: 'The user prefers green tea', key: 'drink' });
    expect(saved).toEqual({ status: 'success', body: { ok: true, key: 'drink' } });
    expect((await call('acme', 'u1', 'recall', { query: 'tea' })).body).toEqual({ ok: true, memories: [{ key: 'drink', fact: 'The user prefers green tea' }] });
    expect((await call('acme', 'u2', 'recall', { query: 'tea' })).body).toEqual({ ok: true, memories: [] });
    expect((await call('globex', 'u1', 'recall', { query: 'tea' })).body).toEqual({ ok: true, memories: [] });
  });

  it('without a key, the same tool call executed twice keeps one fact', async () => {
    const memory = memoryOf('acme', 'u4');
    const first = await runMemoryTool({ id: 'call-again', name: 'remember', args: { fact: 'Has a cat' } }, memory);
    const second = await runMemoryTool({ id: 'call-again', name: 'remember', args: { fact: 'Has a cat' } }, memory);
    expect(first.content).toEqual(second.content);
    expect((await call('acme', 'u4', 'recall', { query: '' })).body.memories).toHaveLength(1);
  });

  it('forgets by key, and says when there is no such memory', async () => {
    await call('acme', 'u3', 'remember', { fact: 'Lives in Lyon', key: 'city' });
    expect(await call('acme', 'u3', 'forget', { key: 'city' })).toEqual({ status: 'success', body: { ok: true, key: 'city' } });
    expect((await call('acme', 'u3', 'recall', { query: '' })).body).toEqual({ ok: true, memories: [] });
    const again = await call('acme', 'u3', 'forget', { key: 'city' });
    expect(again.status).toBe('error');
    expect(again.body.error).toMatch(/No memory has the key "city"/);
  });

  it('refuses to remember without a user instead of sharing memory between users', async () => {
    const res = await call('acme', null, 'remember', { fact: 'anything' });
    expect(res.status).toBe('error');
    expect(res.body.error).toMatch(/No user is known for this run.*config\.configurable\.user_id/);
    expect(await store.listItemNamespaces('acme', { prefix: ['memories'], limit: 100, offset: 0 })).not.toContainEqual(['memories']);
  });

  it('refuses an empty or over-long fact', async () => {
    expect((await call('acme', 'u1', 'remember', { fact: ' ' })).body.error).toMatch(/"fact" must be a non-empty string/);
    expect((await call('acme', 'u1', 'remember', { fact: 'x'.repeat(2001) })).body.error).toMatch(/longer than 2000/);
  });

  it('keeps user ids with "." apart from each other in valid namespaces', async () => {
    expect(memoryNamespace('ada.lovelace@example.com')).toEqual(['memories', 'ada%2Elovelace@example%2Ecom']);
    expect(memoryNamespace('a%2Eb')).not.toEqual(memoryNamespace('a.b'));
    await call('acme', 'ada.lovelace@example.com', 'remember', { fact: 'Writes programs', key: 'k' });
    expect((await call('acme', 'ada.lovelace@example.com', 'recall', { query: 'programs' })).body.memories).toHaveLength(1);
  });
});

describe('the run user', () => {
  it('comes from config.configurable.user_id, else the thread metadata, else none', async () => {
    expect(runUserId({ user_id: 'cfg' }, { user_id: 'meta' })).toBe('cfg');
    expect(runUserId({}, { user_id: 'meta' })).toBe('meta');
    expect(runUserId({ user_id: '' }, {})).toBeNull();
    await store.createThread({ tenantId: 'acme', threadId: 'th-1', metadata: { user_id: 'from-thread' } });
    expect(await runMemory(items, store, { tenantId: 'acme', threadId: 'th-1' }, {}).userId()).toBe('from-thread');
    expect(await runMemory(items, store, { tenantId: 'acme', threadId: 'th-1' }, { user_id: 'x' }).userId()).toBe('x');
    // Another tenant's thread of the same id is not this run's thread.
    expect(await runMemory(items, store, { tenantId: 'globex', threadId: 'th-1' }, {}).userId()).toBeNull();
  });
});

describe('TenantMemoryStore (LangGraph BaseStore)', () => {
  it('puts, gets, searches, lists and deletes within its tenant', async () => {
    const a = new TenantMemoryStore(items, 'tenant-a');
    const b = new TenantMemoryStore(items, 'tenant-b');
    await a.put(['prefs', 'u1'], 'theme', { value: 'dark' });
    expect(await a.get(['prefs', 'u1'], 'theme')).toMatchObject({ namespace: ['prefs', 'u1'], key: 'theme', value: { value: 'dark' } });
    expect(await b.get(['prefs', 'u1'], 'theme')).toBeNull();
    expect((await a.search(['prefs'])).map((i) => i.key)).toEqual(['theme']);
    expect(await b.search(['prefs'])).toEqual([]);
    expect(await a.listNamespaces({ prefix: ['prefs'] })).toEqual([['prefs', 'u1']]);
    await a.delete(['prefs', 'u1'], 'theme');
    expect(await a.get(['prefs', 'u1'], 'theme')).toBeNull();
  });
});
