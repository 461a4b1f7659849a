import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../testing/index.js';
import { DEFAULT_ASSISTANT_ID } from '../serialize.js';

let gw: TestGateway;
beforeEach(async () => {
  gw = await startTestGateway();
});
afterEach(async () => gw.close());

const json = (payload: string) => JSON.parse(payload) as Record<string, unknown>;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

describe('meta', () => {
  it('GET /ok answers {ok:true}', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/ok' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
  });

  it('GET /info reports the version and flags', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/info' });
    expect(res.json()).toMatchObject({ version: expect.any(String), flags: { assistants: true, crons: false, langsmith: false } });
  });

  it('an unknown path is a 404 with a detail', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toContain('/nope');
  });
});

describe('assistants', () => {
  it('POST /assistants/search returns the agent assistant', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/assistants/search', payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([expect.objectContaining({ assistant_id: DEFAULT_ASSISTANT_ID, graph_id: 'agent', name: 'agent', version: 1 })]);
  });

  it('POST /assistants/search with another graph id returns nothing', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/assistants/search', payload: { graph_id: 'other' } });
    expect(res.json()).toEqual([]);
  });

  it('GET /assistants/{id} resolves both the UUID and the graph id "agent"', async () => {
    const byId = await gw.app.inject({ method: 'GET', url: `/assistants/${DEFAULT_ASSISTANT_ID}` });
    const byGraph = await gw.app.inject({ method: 'GET', url: '/assistants/agent' });
    expect(byId.json()).toEqual(byGraph.json());
    expect(byGraph.json()).toMatchObject({ assistant_id: DEFAULT_ASSISTANT_ID, config: {}, context: {}, metadata: {} });
  });

  it('GET /assistants/{id} of an unknown assistant is a 404', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/assistants/nobody' });
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toContain('nobody');
  });

  it('serves the graph and schemas of the assistant', async () => {
    const graph = await gw.app.inject({ method: 'GET', url: '/assistants/agent/graph' });
    const schemas = await gw.app.inject({ method: 'GET', url: '/assistants/agent/schemas' });
    expect(graph.json().nodes.map((n: { id: string }) => n.id)).toContain('tools');
    expect(schemas.json()).toMatchObject({ graph_id: 'agent' });
  });

  it('rejects a search body with a bad limit with 422 naming the field', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/assistants/search', payload: { limit: 'ten' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('body.limit');
  });
});

describe('threads', () => {
  it('POST /threads creates a thread with its metadata', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/threads', payload: { metadata: { user: 'ada' } } });
    expect(res.statusCode).toBe(200);
    const t = res.json();
    expect(t).toMatchObject({ metadata: { user: 'ada' }, status: 'idle', values: null, interrupts: {} });
    expect(t.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(t.created_at).toISOString()).toBe(t.created_at);
  });

  it('POST /threads gives the threads it creates UUIDv7 ids in creation order, as the LangGraph server does', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await gw.app.inject({ method: 'POST', url: '/threads', payload: {} })).json().thread_id as string);
    expect(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('POST /threads without a body creates a thread', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/threads', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(res.statusCode).toBe(200);
  });

  it('POST /threads with an existing thread_id is a 409, or the existing thread with if_exists=do_nothing', async () => {
    const first = (await gw.app.inject({ method: 'POST', url: '/threads', payload: { metadata: { n: 1 } } })).json();
    const again = await gw.app.inject({ method: 'POST', url: '/threads', payload: { thread_id: first.thread_id } });
    const kept = await gw.app.inject({ method: 'POST', url: '/threads', payload: { thread_id: first.thread_id, if_exists: 'do_nothing', metadata: { n: 2 } } });
    expect(again.statusCode).toBe(409);
    expect(kept.json()).toMatchObject({ thread_id: first.thread_id, metadata: { n: 1 } });
  });

  it('POST /threads with a non-UUID thread_id is a 422 naming body.thread_id', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/threads', payload: { thread_id: 'abc' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([{ path: 'body.thread_id', message: 'expected a UUID' }]);
  });

  it('POST /threads with malformed JSON is a 400', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/threads', headers: { 'content-type': 'application/json' }, payload: '{"a":' });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toContain('not valid JSON');
  });

  it('GET /threads/{id} returns the thread; an unknown id is a 404 naming it', async () => {
    const t = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {} })).json();
    const got = await gw.app.inject({ method: 'GET', url: `/threads/${t.thread_id}` });
    const missing = await gw.app.inject({ method: 'GET', url: `/threads/${UNKNOWN}` });
    expect(got.json()).toEqual(t);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().detail).toContain(UNKNOWN);
  });

  it('GET /threads/{id} with a non-UUID id is a 422 naming params.thread_id', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/threads/xyz' });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('params.thread_id');
  });

  it('PATCH /threads/{id} merges metadata', async () => {
    const t = (await gw.app.inject({ method: 'POST', url: '/threads', payload: { metadata: { a: 1 } } })).json();
    const res = await gw.app.inject({ method: 'PATCH', url: `/threads/${t.thread_id}`, payload: { metadata: { b: 2 } } });
    expect(res.json().metadata).toEqual({ a: 1, b: 2 });
  });

  it('DELETE /threads/{id} removes the thread (204), then it is a 404', async () => {
    const t = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {} })).json();
    const del = await gw.app.inject({ method: 'DELETE', url: `/threads/${t.thread_id}` });
    const again = await gw.app.inject({ method: 'DELETE', url: `/threads/${t.thread_id}` });
    const get = await gw.app.inject({ method: 'GET', url: `/threads/${t.thread_id}` });
    expect(del.statusCode).toBe(204);
    expect(again.statusCode).toBe(404);
    expect(get.statusCode).toBe(404);
  });

  it('POST /threads/search filters by metadata and paginates', async () => {
    for (const user of ['ada', 'ada', 'bob']) await gw.app.inject({ method: 'POST', url: '/threads', payload: { metadata: { user } } });
    const ada = await gw.app.inject({ method: 'POST', url: '/threads/search', payload: { metadata: { user: 'ada' } } });
    const page = await gw.app.inject({ method: 'POST', url: '/threads/search', payload: { limit: 2, offset: 0 } });
    expect(ada.json()).toHaveLength(2);
    expect(ada.json().every((t: { metadata: { user: string } }) => t.metadata.user === 'ada')).toBe(true);
    expect(page.json()).toHaveLength(2);
  });

  it('POST /threads/search by ids returns those threads', async () => {
    const a = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {} })).json();
    await gw.app.inject({ method: 'POST', url: '/threads', payload: {} });
    const res = await gw.app.inject({ method: 'POST', url: '/threads/search', payload: { ids: [a.thread_id, UNKNOWN] } });
    expect(res.json().map((t: { thread_id: string }) => t.thread_id)).toEqual([a.thread_id]);
  });

  it('POST /threads/search with an unknown status is a 422', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/threads/search', payload: { status: 'sleeping' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('body.status');
  });

  it('GET /threads/{id}/state of a new thread has empty values and a checkpoint on the thread', async () => {
    const t = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {} })).json();
    const res = await gw.app.inject({ method: 'GET', url: `/threads/${t.thread_id}/state` });
    expect(res.json()).toMatchObject({
      values: {},
      next: [],
      tasks: [],
      checkpoint: { thread_id: t.thread_id, checkpoint_ns: '', checkpoint_id: null },
      parent_checkpoint: null,
      interrupts: [],
    });
  });

  it('GET /threads/{id}/state of an unknown thread is a 404', async () => {
    const res = await gw.app.inject({ method: 'GET', url: `/threads/${UNKNOWN}/state` });
    expect(res.statusCode).toBe(404);
  });

  it('POST /threads/{id}/history of a thread without state is empty', async () => {
    const t = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {} })).json();
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${t.thread_id}/history`, payload: { limit: 10 } });
    expect(json(res.payload)).toEqual([]);
  });
});

describe('metadata limits (issue 18)', () => {
  it('refuses metadata with more than 1,000 keys with a 422 naming the field, and stores nothing', async () => {
    const metadata: Record<string, string> = {};
    for (let i = 0; i < 1001; i++) metadata[`k${i}`] = 'v';
    const res = await gw.app.inject({ method: 'POST', url: '/threads', payload: { metadata } });
    expect(res.statusCode).toBe(422);
    expect(res.payload).toContain('body.metadata');
    expect(res.payload).toContain('at most 1000 keys');
    const listed = await gw.app.inject({ method: 'POST', url: '/threads/search', payload: {} });
    expect(listed.json()).toEqual([]);
  });

  it('accepts metadata of 1,000 keys', async () => {
    const metadata: Record<string, string> = {};
    for (let i = 0; i < 1000; i++) metadata[`k${i}`] = 'v';
    const res = await gw.app.inject({ method: 'POST', url: '/threads', payload: { metadata } });
    expect(res.statusCode).toBe(200);
  });

  it('still refuses metadata that is not an object', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/threads', payload: { metadata: [1, 2] } });
    expect(res.statusCode).toBe(422);
  });
});
