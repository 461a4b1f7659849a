/** The assistants part of the `Store` contract (issue 11), run by `storeContract` on each backend. */
import { describe, expect, it } from 'vitest';
import type { Store } from '../types.js';
import type { StoreTestHarness } from './contract.js';
import { uid, useMigratedStore } from './fixture.js';

export function assistantsContract(harness: StoreTestHarness): void {
  describe(`Store assistants (${harness.name})`, () => {
    const store = useMigratedStore(harness);

    const create = (tenantId: string, over: Partial<Parameters<Store['createAssistant']>[0]> = {}) =>
      store().createAssistant({ tenantId, assistantId: uid('a'), graphId: 'agent', name: 'helper', ...over });

    it('creates version 1 and reads it back; a second create of the id keeps the first', async () => {
      const tenantId = uid('t');
      const { assistant, created } = await create(tenantId, {
        assistantId: 'a1',
        name: 'Researcher',
        description: 'finds things',
        config: { configurable: { system_prompt: 'be brief' } },
        context: { k: 1 },
        metadata: { team: 'x' },
      });
      expect(created).toBe(true);
      expect(assistant).toMatchObject({
        tenantId,
        assistantId: 'a1',
        graphId: 'agent',
        name: 'Researcher',
        description: 'finds things',
        config: { configurable: { system_prompt: 'be brief' } },
        context: { k: 1 },
        metadata: { team: 'x' },
        version: 1,
      });
      const again = await create(tenantId, { assistantId: 'a1', name: 'Other' });
      expect(again).toMatchObject({ created: false, assistant: { name: 'Researcher', version: 1 } });
      expect(await store().listAssistantVersions(tenantId, 'a1', { limit: 10, offset: 0 })).toHaveLength(1);
    });

    it("keeps tenants apart: another tenant's assistant is not found, not updated, not deleted", async () => {
      const { assistant } = await create(uid('t'));
      const other = uid('t');
      expect(await store().getAssistant(other, assistant.assistantId)).toBeUndefined();
      expect(await store().updateAssistant(other, assistant.assistantId, { name: 'stolen' })).toBeUndefined();
      expect(await store().setAssistantLatest(other, assistant.assistantId, 1)).toBeUndefined();
      expect(await store().deleteAssistant(other, assistant.assistantId)).toBe(false);
      expect(await store().listAssistantVersions(other, assistant.assistantId, { limit: 10, offset: 0 })).toEqual([]);
      expect(await store().searchAssistants(other, { limit: 10, offset: 0 })).toEqual([]);
      expect((await store().getAssistant(assistant.tenantId, assistant.assistantId))?.name).toBe('helper');
    });

    it('update writes the next version: given fields replace, metadata merges, the rest is kept', async () => {
      const tenantId = uid('t');
      const { assistant } = await create(tenantId, { config: { configurable: { max_loops: 5 } }, context: { a: 1 }, metadata: { x: 1, y: 1 } });
      const v2 = await store().updateAssistant(tenantId, assistant.assistantId, { config: { configurable: { max_loops: 9 } }, metadata: { y: 2 } });
      expect(v2).toMatchObject({ version: 2, name: 'helper', config: { configurable: { max_loops: 9 } }, context: { a: 1 }, metadata: { x: 1, y: 2 } });
      const versions = await store().listAssistantVersions(tenantId, assistant.assistantId, { limit: 10, offset: 0 });
      expect(versions.map((v) => [v.version, v.config])).toEqual([
        [2, { configurable: { max_loops: 9 } }],
        [1, { configurable: { max_loops: 5 } }],
      ]);
      expect(await store().listAssistantVersions(tenantId, assistant.assistantId, { limit: 10, offset: 0, metadata: { y: 1 } })).toEqual([
        expect.objectContaining({ version: 1 }),
      ]);
    });

    it('setLatest brings an older version back, and the next update numbers after the highest', async () => {
      const tenantId = uid('t');
      const { assistant } = await create(tenantId, { name: 'one' });
      await store().updateAssistant(tenantId, assistant.assistantId, { name: 'two' });
      const back = await store().setAssistantLatest(tenantId, assistant.assistantId, 1);
      expect(back).toMatchObject({ version: 1, name: 'one' });
      await expect(store().setAssistantLatest(tenantId, assistant.assistantId, 7)).rejects.toThrow(/has no version 7/);
      const v3 = await store().updateAssistant(tenantId, assistant.assistantId, { description: 'third' });
      expect(v3).toMatchObject({ version: 3, name: 'one', description: 'third' });
    });

    it('delete removes the assistant and its versions', async () => {
      const tenantId = uid('t');
      const { assistant } = await create(tenantId);
      await store().updateAssistant(tenantId, assistant.assistantId, { name: 'v2' });
      expect(await store().deleteAssistant(tenantId, assistant.assistantId)).toBe(true);
      expect(await store().getAssistant(tenantId, assistant.assistantId)).toBeUndefined();
      expect(await store().listAssistantVersions(tenantId, assistant.assistantId, { limit: 10, offset: 0 })).toEqual([]);
      expect(await store().deleteAssistant(tenantId, assistant.assistantId)).toBe(false);
    });

    it('searches by graph, name substring (any case) and metadata, sorted and paged; count agrees', async () => {
      const tenantId = uid('t');
      const names = ['Beta writer', 'alpha reader', 'Gamma Writer', 'delta'];
      for (const [i, name] of names.entries()) {
        await create(tenantId, { assistantId: `id-${i}`, name, metadata: { even: i % 2 === 0 }, graphId: i === 3 ? 'other' : 'agent' });
      }
      const byName = await store().searchAssistants(tenantId, { limit: 10, offset: 0, sortBy: 'name', sortOrder: 'asc' });
      expect(byName.map((a) => a.name)).toEqual(['Beta writer', 'Gamma Writer', 'alpha reader', 'delta']);
      const writers = await store().searchAssistants(tenantId, { limit: 10, offset: 0, name: 'WRITER', sortBy: 'assistant_id', sortOrder: 'desc' });
      expect(writers.map((a) => a.assistantId)).toEqual(['id-2', 'id-0']);
      const evenAgents = await store().searchAssistants(tenantId, {
        limit: 1,
        offset: 1,
        graphId: 'agent',
        metadata: { even: true },
        sortBy: 'assistant_id',
        sortOrder: 'asc',
      });
      expect(evenAgents.map((a) => a.assistantId)).toEqual(['id-2']);
      expect(await store().countAssistants(tenantId, {})).toBe(4);
      expect(await store().countAssistants(tenantId, { graphId: 'agent' })).toBe(3);
      expect(await store().countAssistants(tenantId, { name: 'writer', metadata: { even: true } })).toBe(2);
      const page = await store().searchAssistants(tenantId, { limit: 2, offset: 1, sortBy: 'assistant_id', sortOrder: 'asc' });
      expect(page.map((a) => a.assistantId)).toEqual(['id-1', 'id-2']);
    });
  });
}
