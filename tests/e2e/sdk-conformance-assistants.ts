/**
 * `client.assistants`, method by method, as LangGraph Platform defines it (issue 11, deliverable 1):
 * assistants are versioned agent configurations over the `agent` graph; runs use the assistant's
 * configuration of the version that is latest at submission.
 */
import { expect, it } from 'vitest';
import { scripted } from './helpers.js';
import { ask, DEFAULT_ASSISTANT_ID, statusOf, type Target } from './sdk-harness.js';

type Msg = { type: string; content: string };
const lastContent = (values: unknown) => (values as { messages: Msg[] }).messages.at(-1)!.content;

export function assistantsTests(t: Target): void {
  it('assistants.create makes a version-1 assistant over the agent graph with config, metadata, name and description', async () => {
    const a = await t.client.assistants.create({
      graphId: 'agent',
      name: 'create-check',
      description: 'reviews pull requests',
      config: { configurable: { max_loops: 4 } },
      metadata: { team: 'create-check' },
    });
    expect(a).toMatchObject({
      assistant_id: expect.any(String),
      graph_id: 'agent',
      name: 'create-check',
      description: 'reviews pull requests',
      version: 1,
      metadata: { team: 'create-check' },
      config: { configurable: { max_loops: 4 } },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(a.assistant_id).not.toBe(DEFAULT_ASSISTANT_ID);
    expect(typeof a.context).toBe('object');
  });

  it('assistants.create with an assistantId: ifExists do_nothing returns the existing one, raise is 409, an unknown graph is 4xx', async () => {
    const assistantId = crypto.randomUUID();
    const first = await t.client.assistants.create({ graphId: 'agent', assistantId, name: 'fixed-id', metadata: { team: 'ifexists' } });
    expect(first.assistant_id).toBe(assistantId);
    const again = await t.client.assistants.create({ graphId: 'agent', assistantId, name: 'other name', ifExists: 'do_nothing' });
    expect(again).toMatchObject({ assistant_id: assistantId, name: 'fixed-id', version: 1 });
    expect(await statusOf(t.client.assistants.create({ graphId: 'agent', assistantId, ifExists: 'raise' }))).toBe(409);
    const status = await statusOf(t.client.assistants.create({ graphId: 'no-such-graph' }));
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
  });

  it('assistants.get returns an assistant by id, the built-in one by graph id, and 404 for an unknown id', async () => {
    const a = await t.client.assistants.create({ graphId: 'agent', name: 'get-check' });
    expect(await t.client.assistants.get(a.assistant_id)).toMatchObject({ assistant_id: a.assistant_id, name: 'get-check', graph_id: 'agent', version: 1 });
    expect(await t.client.assistants.get('agent')).toMatchObject({ assistant_id: DEFAULT_ASSISTANT_ID, graph_id: 'agent' });
    expect(await statusOf(t.client.assistants.get(crypto.randomUUID()))).toBe(404);
  });

  it('assistants.update makes a new version under the same assistant_id', async () => {
    const a = await t.client.assistants.create({ graphId: 'agent', name: 'update-v1', metadata: { stage: 'one' }, config: { configurable: { max_loops: 3 } } });
    const b = await t.client.assistants.update(a.assistant_id, { name: 'update-v2', metadata: { stage: 'two' }, config: { configurable: { max_loops: 6 } } });
    expect(b).toMatchObject({
      assistant_id: a.assistant_id,
      version: 2,
      name: 'update-v2',
      metadata: { stage: 'two' },
      config: { configurable: { max_loops: 6 } },
    });
    expect(await t.client.assistants.get(a.assistant_id)).toMatchObject({ version: 2, name: 'update-v2' });
    expect(await statusOf(t.client.assistants.update(crypto.randomUUID(), { name: 'x' }))).toBe(404);
  });

  it('assistants.getVersions lists every version newest first, filtered by metadata', async () => {
    const a = await t.client.assistants.create({ graphId: 'agent', name: 'versions-v1', metadata: { stage: 'one' } });
    await t.client.assistants.update(a.assistant_id, { name: 'versions-v2', metadata: { stage: 'two' } });
    await t.client.assistants.update(a.assistant_id, { name: 'versions-v3', metadata: { stage: 'three' } });
    const versions = await t.client.assistants.getVersions(a.assistant_id);
    expect(versions.map((v) => [v.version, v.name])).toEqual([
      [3, 'versions-v3'],
      [2, 'versions-v2'],
      [1, 'versions-v1'],
    ]);
    expect(versions.every((v) => v.assistant_id === a.assistant_id && v.graph_id === 'agent')).toBe(true);
    const filtered = await t.client.assistants.getVersions(a.assistant_id, { metadata: { stage: 'two' } });
    expect(filtered.map((v) => v.version)).toEqual([2]);
    expect((await t.client.assistants.getVersions(a.assistant_id, { limit: 1, offset: 1 })).map((v) => v.version)).toEqual([2]);
  });

  it('assistants.setLatest makes an older version the current one', async () => {
    const a = await t.client.assistants.create({ graphId: 'agent', name: 'latest-v1' });
    await t.client.assistants.update(a.assistant_id, { name: 'latest-v2' });
    const back = await t.client.assistants.setLatest(a.assistant_id, 1);
    expect(back).toMatchObject({ assistant_id: a.assistant_id, version: 1, name: 'latest-v1' });
    expect(await t.client.assistants.get(a.assistant_id)).toMatchObject({ version: 1, name: 'latest-v1' });
    expect(await statusOf(t.client.assistants.setLatest(a.assistant_id, 99))).toBe(404);
  });

  it('assistants.search filters by graph_id, name and metadata with limit and offset', async () => {
    const tag = `search-${crypto.randomUUID()}`;
    const made = [];
    for (const n of [1, 2, 3]) made.push(await t.client.assistants.create({ graphId: 'agent', name: `${tag}-${n}`, metadata: { tag } }));
    const found = await t.client.assistants.search({ metadata: { tag }, limit: 10 });
    expect(found.map((a) => a.assistant_id).sort()).toEqual(made.map((a) => a.assistant_id).sort());
    expect((await t.client.assistants.search({ metadata: { tag }, limit: 2 })).length).toBe(2);
    expect((await t.client.assistants.search({ metadata: { tag }, limit: 2, offset: 2 })).length).toBe(1);
    expect((await t.client.assistants.search({ graphId: 'agent', name: `${tag}-2` })).map((a) => a.assistant_id)).toEqual([made[1]!.assistant_id]);
    expect(await t.client.assistants.search({ graphId: 'other-graph', metadata: { tag } })).toEqual([]);
    const page = await t.client.assistants.search({ metadata: { tag }, limit: 1, includePagination: true });
    expect(page.assistants).toHaveLength(1);
  });

  it('assistants.count counts the assistants matching metadata and graph', async () => {
    const tag = `count-${crypto.randomUUID()}`;
    expect(await t.client.assistants.count({ metadata: { tag } })).toBe(0);
    await t.client.assistants.create({ graphId: 'agent', metadata: { tag } });
    await t.client.assistants.create({ graphId: 'agent', metadata: { tag } });
    expect(await t.client.assistants.count({ metadata: { tag } })).toBe(2);
    expect(await t.client.assistants.count({ metadata: { tag }, graphId: 'agent' })).toBe(2);
    expect(await t.client.assistants.count({ graphId: 'agent' })).toBeGreaterThanOrEqual(3);
  });

  it('assistants.getGraph draws the agent graph: nodes and edges between them', async () => {
    const a = await t.client.assistants.create({ graphId: 'agent', name: 'graph-check' });
    for (const id of ['agent', a.assistant_id]) {
      const g = (await t.client.assistants.getGraph(id)) as { nodes: Array<{ id: string | number }>; edges: Array<{ source: string; target: string }> };
      const ids = g.nodes.map((n) => String(n.id));
      expect(ids).toEqual(expect.arrayContaining(['__start__', 'agent', 'tools', '__end__']));
      expect(g.edges.length).toBeGreaterThanOrEqual(3);
      expect(g.edges.every((e) => ids.includes(e.source) && ids.includes(e.target))).toBe(true);
      expect(g.edges).toEqual(expect.arrayContaining([expect.objectContaining({ source: '__start__', target: 'agent' })]));
    }
    expect(await statusOf(t.client.assistants.getGraph(crypto.randomUUID()))).toBe(404);
  });

  it('assistants.getSchemas publishes input, output, state, config and context schemas', async () => {
    const a = await t.client.assistants.create({ graphId: 'agent', name: 'schemas-check' });
    const s = await t.client.assistants.getSchemas(a.assistant_id);
    expect(s.graph_id).toBe('agent');
    expect(s.input_schema).toMatchObject({ type: 'object', properties: { messages: expect.any(Object) } });
    expect(s.state_schema).toMatchObject({ type: 'object', properties: { messages: expect.any(Object) } });
    expect(s.output_schema).toMatchObject({ type: 'object' });
    expect(s.config_schema).toMatchObject({ type: 'object', properties: expect.objectContaining({ max_loops: expect.any(Object) }) });
    expect(s.context_schema).toMatchObject({ type: 'object' });
  });

  it('assistants.getSubgraphs returns a namespace → schemas map (also with recurse)', async () => {
    const subgraphs = await t.client.assistants.getSubgraphs('agent');
    expect(subgraphs).toEqual(expect.any(Object));
    expect(Array.isArray(subgraphs)).toBe(false);
    for (const schema of Object.values(subgraphs)) expect(schema).toMatchObject({ graph_id: expect.any(String) });
    expect(await t.client.assistants.getSubgraphs('agent', { recurse: true })).toEqual(expect.any(Object));
    expect(await statusOf(t.client.assistants.getSubgraphs(crypto.randomUUID()))).toBe(404);
  });

  it('assistants.delete removes the assistant: get is 404, it is no longer found, a run on it is 404', async () => {
    const a = await t.client.assistants.create({ graphId: 'agent', name: 'delete-check', metadata: { tag: 'delete-check' } });
    await t.client.assistants.delete(a.assistant_id);
    expect(await statusOf(t.client.assistants.get(a.assistant_id))).toBe(404);
    expect((await t.client.assistants.search({ metadata: { tag: 'delete-check' } })).map((x) => x.assistant_id)).not.toContain(a.assistant_id);
    const thread = await t.client.threads.create();
    expect(await statusOf(t.client.runs.create(thread.thread_id, a.assistant_id, { input: ask('hi') }))).toBe(404);
    expect(await statusOf(t.client.assistants.delete(a.assistant_id))).toBe(404);
  });

  it("runs use the assistant's config, of the version latest at submission", async () => {
    const a = await t.client.assistants.create({ graphId: 'agent', name: 'runs-check', config: scripted([{ content: 'answer of version 1' }]) });
    const thread = await t.client.threads.create();
    expect(lastContent(await t.client.runs.wait(thread.thread_id, a.assistant_id, { input: ask('who are you?') }))).toBe('answer of version 1');
    await t.client.assistants.update(a.assistant_id, { config: scripted([{ content: 'answer of version 2' }]) });
    expect(lastContent(await t.client.runs.wait(thread.thread_id, a.assistant_id, { input: ask('and now?') }))).toBe('answer of version 2');
    await t.client.assistants.setLatest(a.assistant_id, 1);
    expect(lastContent(await t.client.runs.wait(thread.thread_id, a.assistant_id, { input: ask('and after setLatest?') }))).toBe('answer of version 1');
    // The run records which assistant it ran; the thread is stamped with it.
    const runs = await t.client.runs.list(thread.thread_id);
    expect(runs.every((r) => r.assistant_id === a.assistant_id)).toBe(true);
    expect((await t.client.threads.get(thread.thread_id)).metadata).toMatchObject({ assistant_id: a.assistant_id, graph_id: 'agent' });
  });
}
