import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '@agentloop/store';
import { mergeAssistantConfig, mergeContext, resolveRunAssistant } from './assistant-registry.js';
import { DEFAULT_ASSISTANT_ID } from './serialize.js';

describe('mergeAssistantConfig', () => {
  it("lets the run's configurable keys win one by one, keeping the assistant's others", () => {
    const merged = mergeAssistantConfig(
      { configurable: { system_prompt: 'You review SQL.', max_loops: 10, tools: ['read_file'] }, recursion_limit: 50 },
      { configurable: { max_loops: 3, thread_note: 'x' } },
    );
    expect(merged).toEqual({ configurable: { system_prompt: 'You review SQL.', max_loops: 3, tools: ['read_file'], thread_note: 'x' }, recursion_limit: 50 });
  });

  it('concatenates tags, assistant first, and takes top-level run keys over the assistant', () => {
    expect(mergeAssistantConfig({ tags: ['a'], recursion_limit: 50 }, { tags: ['b'], recursion_limit: 5 })).toEqual({ tags: ['a', 'b'], recursion_limit: 5 });
  });

  it("is the assistant's config when the run has none, without adding keys", () => {
    expect(mergeAssistantConfig({ configurable: { model: 'code' } }, undefined)).toEqual({ configurable: { model: 'code' } });
    expect(mergeAssistantConfig({}, null)).toEqual({});
  });
});

describe('mergeContext', () => {
  it("takes the run's keys over the assistant's", () => {
    expect(mergeContext({ team: 'data', region: 'eu' }, { region: 'us' })).toEqual({ team: 'data', region: 'us' });
    expect(mergeContext({ team: 'data' }, null)).toEqual({ team: 'data' });
  });
});

describe('resolveRunAssistant', () => {
  it("resolves the built-in by graph id, a tenant's assistant by id at its current version, and 404s another tenant's", async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
    try {
      expect(await resolveRunAssistant(store, 'acme', 'agent')).toEqual({
        assistant_id: DEFAULT_ASSISTANT_ID,
        graph_id: 'agent',
        version: 1,
        config: {},
        context: {},
      });
      const id = '6f1d2c3b-0a4e-4f5a-8b6c-7d8e9f0a1b2c';
      await store.createAssistant({ tenantId: 'acme', assistantId: id, graphId: 'agent', name: 'r', config: { configurable: { max_loops: 4 } } });
      await store.updateAssistant('acme', id, { config: { configurable: { max_loops: 8 } }, context: { k: 1 } });
      expect(await resolveRunAssistant(store, 'acme', id.toUpperCase())).toEqual({
        assistant_id: id,
        graph_id: 'agent',
        version: 2,
        config: { configurable: { max_loops: 8 } },
        context: { k: 1 },
      });
      await expect(resolveRunAssistant(store, 'globex', id)).rejects.toMatchObject({ statusCode: 404 });
      await expect(resolveRunAssistant(store, 'acme', 'other-graph')).rejects.toMatchObject({ statusCode: 404 });
    } finally {
      await store.close();
    }
  });
});
