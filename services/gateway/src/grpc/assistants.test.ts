import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { failure, startTwoTenantGrpc, type TwoTenantGrpc } from './testing.js';

// Assistants over gRPC: the same operations as HTTP /assistants (assistant-api.ts), per tenant.
let t: TwoTenantGrpc;
beforeAll(async () => {
  t = await startTwoTenantGrpc();
});
afterAll(async () => t.close());

const config = (prompt: string) => JSON.stringify({ configurable: { system_prompt: prompt, max_loops: 12 } });

describe('assistants over gRPC', () => {
  it('creates, gets, updates (a new version), lists versions, sets the latest, searches and deletes', async () => {
    const a = await t.acme.createAssistant({ name: 'SQL reviewer', configJson: config('You review SQL.'), metadataJson: JSON.stringify({ team: 'data' }) });
    expect(a).toMatchObject({ graphId: 'agent', name: 'SQL reviewer', version: 1, description: '' });
    expect(JSON.parse(a.configJson)).toEqual({ configurable: { system_prompt: 'You review SQL.', max_loops: 12 } });
    expect((await t.acme.getAssistant({ assistantId: a.assistantId })).name).toBe('SQL reviewer');

    const v2 = await t.acme.updateAssistant({ assistantId: a.assistantId, configJson: config('Be strict.'), description: 'strict' });
    expect(v2).toMatchObject({ version: 2, description: 'strict', name: 'SQL reviewer' });
    const versions = await t.acme.listAssistantVersions({ assistantId: a.assistantId });
    expect(
      versions.versions.map((v) => [v.version, (JSON.parse(v.configJson) as { configurable: { system_prompt: string } }).configurable.system_prompt]),
    ).toEqual([
      [2, 'Be strict.'],
      [1, 'You review SQL.'],
    ]);
    const back = await t.acme.setLatestAssistantVersion({ assistantId: a.assistantId, version: 1 });
    expect(back).toMatchObject({ version: 1, description: '' });
    const cleared = await t.acme.updateAssistant({ assistantId: a.assistantId, description: '' });
    expect(cleared.description).toBe('');

    // As HTTP shows it.
    const http = await t.gw.app.inject({ method: 'GET', url: `/assistants/${a.assistantId}`, headers: { 'x-api-key': 'acme-key' } });
    expect(http.json()).toMatchObject({ assistant_id: a.assistantId, version: cleared.version, description: null });

    const found = await t.acme.searchAssistants({ metadataJson: JSON.stringify({ team: 'data' }) });
    expect(found.assistants.map((x) => x.assistantId)).toEqual([a.assistantId]);
    expect((await t.acme.countAssistants({ metadataJson: JSON.stringify({ team: 'data' }) })).count).toBe(1n);
    // The built-in assistant counts too, as over HTTP.
    expect((await t.acme.countAssistants({ name: 'agent' })).count).toBe(1n);
    const firstPage = await t.acme.searchAssistants({ limit: 1, sortBy: 'created_at', sortOrder: 'asc' });
    expect(firstPage.assistants).toHaveLength(1);
    expect(firstPage.nextOffset).toBe(1);

    await t.acme.deleteAssistant({ assistantId: a.assistantId });
    expect((await failure(t.acme.getAssistant({ assistantId: a.assistantId }))).code).toBe(grpc.status.NOT_FOUND);
  });

  it('answers ALREADY_EXISTS for a taken id, the assistant with if_exists_do_nothing, FAILED_PRECONDITION for the built-in one', async () => {
    const id = '6f1d0c3e-8a52-4b7e-9f0a-2c3d4e5f6a7b';
    await t.acme.createAssistant({ assistantId: id, name: 'first' });
    const dup = await failure(t.acme.createAssistant({ assistantId: id, name: 'second' }));
    expect(dup.code).toBe(grpc.status.ALREADY_EXISTS);
    expect(dup.details).toContain('if_exists_do_nothing');
    expect((await t.acme.createAssistant({ assistantId: id, name: 'second', ifExistsDoNothing: true })).name).toBe('first');
    expect((await t.acme.getAssistant({ assistantId: 'agent' })).graphId).toBe('agent');
    expect((await failure(t.acme.deleteAssistant({ assistantId: 'agent' }))).code).toBe(grpc.status.FAILED_PRECONDITION);
    await t.acme.deleteAssistant({ assistantId: id });
  });

  it("keeps tenants apart: another tenant's assistant is NOT_FOUND and absent from its search", async () => {
    const a = await t.acme.createAssistant({ name: 'private one' });
    for (const call of [
      t.globex.getAssistant({ assistantId: a.assistantId }),
      t.globex.updateAssistant({ assistantId: a.assistantId, name: 'mine now' }),
      t.globex.deleteAssistant({ assistantId: a.assistantId }),
      t.globex.listAssistantVersions({ assistantId: a.assistantId }),
      t.globex.setLatestAssistantVersion({ assistantId: a.assistantId, version: 1 }),
    ]) {
      expect((await failure(call)).code).toBe(grpc.status.NOT_FOUND);
    }
    expect((await t.globex.searchAssistants({ name: 'private' })).assistants).toEqual([]);
    expect((await t.globex.countAssistants({ name: 'private' })).count).toBe(0n);
    expect((await t.acme.getAssistant({ assistantId: a.assistantId })).name).toBe('private one');
  });

  it('names the invalid field with INVALID_ARGUMENT', async () => {
    const cases: Array<[Promise<unknown>, string]> = [
      [t.acme.createAssistant({ assistantId: 'nope' }), 'assistant_id'],
      [t.acme.createAssistant({ graphId: 'other' }), 'graph_id'],
      [t.acme.createAssistant({ configJson: JSON.stringify({ configurable: { max_loops: 0 } }) }), 'config_json.configurable.max_loops'],
      [t.acme.createAssistant({ metadataJson: '[]' }), 'metadata_json'],
      [t.acme.createAssistant({ contextJson: '{' }), 'context_json'],
      [t.acme.searchAssistants({ limit: 5000 }), 'limit'],
      [t.acme.searchAssistants({ sortBy: 'color' }), 'sort_by'],
      [t.acme.countAssistants({ metadataJson: '"x"' }), 'metadata_json'],
      [t.acme.setLatestAssistantVersion({ assistantId: 'agent', version: 0 }), 'version'],
      [t.acme.getAssistant({ assistantId: '' }), 'assistant_id'],
    ];
    for (const [call, field] of cases) {
      const err = await failure(call);
      expect(err.code, field).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err.details, field).toContain(field);
      expect(err.details, field).not.toContain('body.');
    }
  });
});
