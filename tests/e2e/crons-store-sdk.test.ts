/**
 * Every `client.crons.*` and `client.store.*` method of the official SDK against AgentLoop in both
 * modes (issue 12, "Done when"): embedded (SQLite store, SQLite scheduler) and cluster (MySQL store,
 * BullMQ job schedulers in Redis). Crons tick every second here (CRON_ALLOW_SECONDS, tests only);
 * each firing is an ordinary run with `metadata.cron_id`.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { poll, scripted, useCluster, useEmbeddedServer } from './helpers.js';

const EVERY_SECOND = '* * * * * *';
const ask = (text: string) => ({ messages: [{ role: 'user', content: text }] });

async function cronsJourney(url: string): Promise<void> {
  const client = new Client({ apiUrl: url });
  const tag = `crons-${crypto.randomUUID()}`;
  const thread = await client.threads.create();
  const config = scripted([{ content: 'tick answered' }]);

  const cron = await client.crons.createForThread(thread.thread_id, 'agent', { schedule: EVERY_SECOND, input: ask('tick'), config, metadata: { tag } });
  expect(cron).toMatchObject({ thread_id: thread.thread_id, schedule: EVERY_SECOND, enabled: true, metadata: { tag } });
  // Two firings: two ordinary runs on the thread, each answered.
  await poll(async () => {
    const runs = await client.runs.list(thread.thread_id);
    return runs.filter((r) => r.status === 'success' && r.metadata?.cron_id === cron.cron_id).length >= 2 ? runs : undefined;
  }, 60_000);

  const stateless = await client.crons.create('agent', { schedule: '0 3 * * *', timezone: 'Europe/Paris', input: ask('nightly'), config, metadata: { tag } });
  expect(stateless).toMatchObject({ thread_id: null, timezone: 'Europe/Paris' });
  expect(await client.crons.count({ metadata: { tag } })).toBe(2);
  const found = await client.crons.search({ metadata: { tag }, sortBy: 'created_at', sortOrder: 'asc' });
  expect(found.map((c) => c.cron_id)).toEqual([cron.cron_id, stateless.cron_id]);
  expect(await client.crons.search({ threadId: thread.thread_id })).toEqual([expect.objectContaining({ cron_id: cron.cron_id })]);

  // Disabled: no more firings; the schedule changes.
  const updated = await client.crons.update(cron.cron_id, { enabled: false, schedule: '*/5 * * * * *' });
  expect(updated).toMatchObject({ enabled: false, schedule: '*/5 * * * * *' });
  await client.crons.delete(cron.cron_id);
  await client.crons.delete(stateless.cron_id);
  expect(await client.crons.count({ metadata: { tag } })).toBe(0);
  await expect(client.crons.delete(cron.cron_id)).rejects.toMatchObject({ status: 404 });
  await expect(client.crons.create('agent', { schedule: 'every day', input: ask('x') })).rejects.toMatchObject({ status: 422 });
}

async function storeJourney(url: string): Promise<void> {
  const client = new Client({ apiUrl: url });
  const user = `u-${crypto.randomUUID()}`;
  await client.store.putItem(['memories', user], 'tea', { fact: 'likes green tea', kind: 'taste' });
  await client.store.putItem(['memories', user], 'city', { fact: 'lives in Lyon', kind: 'place' });
  await client.store.putItem(['memories', user, 'work'], 'job', { fact: 'writes compilers', kind: 'work' });

  expect(await client.store.getItem(['memories', user], 'tea')).toMatchObject({
    namespace: ['memories', user],
    key: 'tea',
    value: { fact: 'likes green tea' },
  });
  expect(await client.store.getItem(['memories', user], 'nope')).toBeNull();

  const all = await client.store.searchItems(['memories', user], { limit: 10 });
  expect(all.items.map((i) => i.key).sort()).toEqual(['city', 'job', 'tea']);
  const places = await client.store.searchItems(['memories', user], { filter: { kind: 'place' } });
  expect(places.items.map((i) => i.key)).toEqual(['city']);
  const tea = await client.store.searchItems(['memories', user], { query: 'green tea' });
  expect(tea.items.map((i) => i.key)).toEqual(['tea']);

  const namespaces = await client.store.listNamespaces({ prefix: ['memories', user] });
  expect(namespaces.namespaces).toEqual(
    expect.arrayContaining([
      ['memories', user],
      ['memories', user, 'work'],
    ]),
  );
  const shallow = await client.store.listNamespaces({ prefix: ['memories', user], maxDepth: 2 });
  expect(shallow.namespaces).toEqual([['memories', user]]);

  await client.store.deleteItem(['memories', user], 'tea');
  expect(await client.store.getItem(['memories', user], 'tea')).toBeNull();
  // (The SDK refuses a label with "." itself; the server does too, for any other client.)
  const bad = await fetch(`${url}/store/items`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespace: ['memories', 'a.b'], key: 'k', value: { v: 1 } }),
  });
  expect(bad.status).toBe(422);
  expect(await bad.text()).toContain('body.namespace.1');
}

describe('crons and the store through the SDK (embedded)', () => {
  const server = useEmbeddedServer('agentloop-crons-store-', { ALLOW_SCRIPTED_MODEL: 'true', CRON_ALLOW_SECONDS: 'true' });

  it('crons: create for a thread and stateless, firings are runs, search, count, update, delete', async () => {
    await cronsJourney(server.url);
  }, 90_000);

  it('store: put, get, search (prefix, filter, query), namespaces, delete', async () => {
    await storeJourney(server.url);
  });
});

describe('crons and the store through the SDK (cluster)', () => {
  const cluster = useCluster({ env: { CRON_ALLOW_SECONDS: 'true' } });

  it('crons: create for a thread and stateless, firings are runs, search, count, update, delete', async () => {
    await cronsJourney(cluster().url);
  }, 120_000);

  it('store: put, get, search (prefix, filter, query), namespaces, delete', async () => {
    await storeJourney(cluster().url);
  });
});
