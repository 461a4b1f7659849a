import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { startTestGateway, type TestGateway } from '../testing/index.js';
import { DEFAULT_ASSISTANT_ID } from '../serialize.js';

// Assistants through the official SDK, unchanged, on a real port; two tenants.
let gw: TestGateway;
let acme: Client;
let globex: Client;
let apiUrl: string;

beforeAll(async () => {
  gw = await startTestGateway({ env: { AGENTLOOP_API_KEYS: 'k1:acme,k2:globex' } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  apiUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
  acme = new Client({ apiUrl, apiKey: 'k1' });
  globex = new Client({ apiUrl, apiKey: 'k2' });
});
afterAll(async () => gw.close());

/** The status and body of an SDK call that must fail. */
async function failure(call: Promise<unknown>): Promise<{ status: number; body: string }> {
  try {
    await call;
  } catch (err) {
    const e = err as { status?: number; message?: string };
    return { status: e.status ?? 0, body: e.message ?? '' };
  }
  throw new Error('expected the call to fail');
}

const reviewer = {
  graphId: 'agent',
  name: 'SQL reviewer',
  description: 'Reviews queries',
  config: { configurable: { system_prompt: 'You review SQL.', max_loops: 12, tools: ['read_file'], require_approval: ['write_file'], custom: 'x' } },
  context: { team: 'data' },
  metadata: { owner: 'ann' },
};

describe('assistants through the SDK', () => {
  it('creates an assistant at version 1 with its configuration, and gets it back', async () => {
    const created = await acme.assistants.create(reviewer);
    expect(created).toMatchObject({
      graph_id: 'agent',
      name: 'SQL reviewer',
      description: 'Reviews queries',
      config: reviewer.config,
      context: { team: 'data' },
      metadata: { owner: 'ann' },
      version: 1,
    });
    expect(created.assistant_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(created.created_at)).not.toBeNaN();
    expect(await acme.assistants.get(created.assistant_id)).toEqual(created);
  });

  it('honours if_exists: raise is a 409, do_nothing returns the existing assistant', async () => {
    const id = '0b0c6a52-6f0e-4b55-9a37-7d1f0e2d4a11';
    await acme.assistants.create({ graphId: 'agent', assistantId: id, name: 'first' });
    expect((await failure(acme.assistants.create({ graphId: 'agent', assistantId: id, name: 'second' }))).status).toBe(409);
    const kept = await acme.assistants.create({ graphId: 'agent', assistantId: id, name: 'second', ifExists: 'do_nothing' });
    expect(kept).toMatchObject({ assistant_id: id, name: 'first' });
  });

  it('update writes version 2 (metadata merged), versions lists both newest first, setLatest goes back', async () => {
    const a = await acme.assistants.create(reviewer);
    const v2 = await acme.assistants.update(a.assistant_id, { config: { configurable: { system_prompt: 'Be strict.' } }, metadata: { stage: 'prod' } });
    expect(v2).toMatchObject({
      version: 2,
      name: 'SQL reviewer',
      config: { configurable: { system_prompt: 'Be strict.' } },
      metadata: { owner: 'ann', stage: 'prod' },
    });
    const versions = await acme.assistants.getVersions(a.assistant_id);
    expect(versions.map((v) => [v.version, v.config.configurable?.system_prompt])).toEqual([
      [2, 'Be strict.'],
      [1, 'You review SQL.'],
    ]);
    expect(versions[0]).not.toHaveProperty('updated_at');
    expect((await acme.assistants.getVersions(a.assistant_id, { metadata: { stage: 'prod' } })).map((v) => v.version)).toEqual([2]);
    const back = await acme.assistants.setLatest(a.assistant_id, 1);
    expect(back).toMatchObject({ version: 1, config: reviewer.config });
    expect((await acme.assistants.get(a.assistant_id)).version).toBe(1);
    expect((await failure(acme.assistants.setLatest(a.assistant_id, 9))).status).toBe(404);
  });

  it('search filters by name and metadata, sorts, pages and projects; count agrees; the built-in is listed too', async () => {
    const tag = `run-${Date.now()}`;
    for (const name of ['b-writer', 'a-writer', 'c-reader']) await acme.assistants.create({ graphId: 'agent', name, metadata: { tag } });
    const writers = await acme.assistants.search({ name: 'WRITER', metadata: { tag }, sortBy: 'name', sortOrder: 'asc' });
    expect(writers.map((a) => a.name)).toEqual(['a-writer', 'b-writer']);
    expect(await acme.assistants.count({ metadata: { tag } })).toBe(3);
    const page = await acme.assistants.search({ metadata: { tag }, sortBy: 'name', sortOrder: 'asc', limit: 1, offset: 1, includePagination: true });
    expect(page.assistants.map((a) => a.name)).toEqual(['b-writer']);
    expect(page.next).toBe('2');
    const projected = await acme.assistants.search({ metadata: { tag }, select: ['assistant_id', 'name'], limit: 1 });
    expect(Object.keys(projected[0]!).sort()).toEqual(['assistant_id', 'name']);
    const byName = await acme.assistants.search({ sortBy: 'name', sortOrder: 'asc', limit: 100 });
    const names = byName.map((a) => a.name);
    expect(names).toContain('agent');
    expect(names).toEqual([...names].sort());
    expect(await acme.assistants.count({ graphId: 'agent' })).toBe(byName.length);
  });

  it('deletes an assistant and its versions', async () => {
    const a = await acme.assistants.create({ graphId: 'agent', name: 'temp' });
    await acme.assistants.delete(a.assistant_id);
    expect((await failure(acme.assistants.get(a.assistant_id))).status).toBe(404);
    expect((await failure(acme.assistants.getVersions(a.assistant_id))).status).toBe(404);
    expect((await failure(acme.assistants.delete(a.assistant_id))).status).toBe(404);
  });

  it("answers 404 for another tenant's assistant, whatever the method, and lists only the tenant's own", async () => {
    const a = await acme.assistants.create({ graphId: 'agent', name: 'acme only', metadata: { secret: true } });
    for (const call of [
      () => globex.assistants.get(a.assistant_id),
      () => globex.assistants.update(a.assistant_id, { name: 'stolen' }),
      () => globex.assistants.delete(a.assistant_id),
      () => globex.assistants.getVersions(a.assistant_id),
      () => globex.assistants.setLatest(a.assistant_id, 1),
      () => globex.assistants.getSchemas(a.assistant_id),
      () => globex.assistants.getGraph(a.assistant_id),
    ]) {
      expect((await failure(call())).status).toBe(404);
    }
    expect(await globex.assistants.search({ metadata: { secret: true } })).toEqual([]);
    expect(await globex.assistants.count({ metadata: { secret: true } })).toBe(0);
    expect((await acme.assistants.get(a.assistant_id)).name).toBe('acme only');
  });

  it('refuses a bad configuration with 422 naming the field', async () => {
    const bad = await failure(acme.assistants.create({ graphId: 'agent', config: { configurable: { max_loops: 0 } } }));
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('body.config.configurable.max_loops');
    const a = await acme.assistants.create({ graphId: 'agent', name: 'ok' });
    const badPatch = await failure(acme.assistants.update(a.assistant_id, { config: { configurable: { require_approval: 'write_file' } } }));
    expect(badPatch.status).toBe(422);
    expect(badPatch.body).toContain('body.config.configurable.require_approval');
    const graph = await failure(acme.assistants.create({ graphId: 'nope' }));
    expect(graph.status).toBe(422);
    expect(graph.body).toContain('body.graph_id');
    expect((await acme.assistants.get(a.assistant_id)).version).toBe(1);
  });

  it('keeps the built-in assistant read-only: update and delete are 409 saying to create your own', async () => {
    const upd = await failure(acme.assistants.update(DEFAULT_ASSISTANT_ID, { name: 'mine' }));
    expect(upd.status).toBe(409);
    expect(upd.body).toContain('POST /assistants');
    expect((await failure(acme.assistants.delete('agent'))).status).toBe(409);
    expect(await acme.assistants.getVersions('agent')).toEqual([expect.objectContaining({ assistant_id: DEFAULT_ASSISTANT_ID, version: 1 })]);
  });

  it('publishes the agent configuration schema and draws the real graph', async () => {
    const a = await acme.assistants.create({ graphId: 'agent', name: 'drawn' });
    const schemas = await acme.assistants.getSchemas(a.assistant_id);
    // As in LangGraph, config_schema is the schema of `config.configurable`.
    const configurable = (schemas.config_schema as { properties: Record<string, { type?: string; maximum?: number }> }).properties;
    expect(configurable.max_loops).toMatchObject({ type: 'integer', maximum: 500 });
    expect(Object.keys(configurable)).toEqual(expect.arrayContaining(['system_prompt', 'tools', 'skills', 'mcp_servers', 'require_approval']));
    const graph = await acme.assistants.getGraph(a.assistant_id, { xray: true });
    expect(graph.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(['__start__', 'agent', 'approve', 'await_approval', 'tools', 'finalize', '__end__']));
    expect(graph.edges).toContainEqual(expect.objectContaining({ source: 'approve', target: 'await_approval', conditional: true }));
    // The agent step writes its calls' verdicts and may end the run itself (issue 9: no approve or finalize step in between).
    expect(graph.edges).toContainEqual(expect.objectContaining({ source: 'agent', target: 'await_approval', conditional: true }));
    expect(graph.edges).toContainEqual(expect.objectContaining({ source: 'agent', target: '__end__', conditional: true }));
    expect(await acme.assistants.getSubgraphs(a.assistant_id)).toEqual({});
  });
});
