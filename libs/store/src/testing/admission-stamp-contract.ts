/**
 * Admission's thread-metadata stamp (`AdmitRequest.threadMetadata`, issue 9): written by the
 * statement that takes the thread, so only by a run that takes it.
 */
import { describe, expect, it } from 'vitest';
import { RunLifecycle } from '../run-lifecycle.js';
import type { StoreTestHarness } from './contract.js';
import { uid, useMigratedStore } from './fixture.js';

export function admissionStampContract(harness: StoreTestHarness): void {
  describe(`RunLifecycle admission stamp (${harness.name})`, () => {
    const store = useMigratedStore(harness);

    it('a run that takes the thread writes the metadata with the take; a deferred or refused run writes none', async () => {
      const s = store();
      const l = new RunLifecycle(s);
      const tenantId = uid('tenant');
      const { threadId } = await s.createThread({ tenantId, threadId: uid('thread'), metadata: { owner: 'ann' } });
      const runOf = () => ({ runId: uid('run'), threadId, tenantId, assistantId: 'agent' });
      const first = await l.admit({ run: runOf(), whenBusy: 'reject', threadMetadata: { owner: 'ann', graph_id: 'agent' } });
      expect(first.kind).toBe('admitted');
      expect(await s.getThread(tenantId, threadId)).toMatchObject({ status: 'busy', metadata: { owner: 'ann', graph_id: 'agent' } });

      const refused = await l.admit({ run: runOf(), whenBusy: 'reject', threadMetadata: { other: 1 } });
      const deferred = await l.admit({ run: runOf(), whenBusy: 'defer', threadMetadata: { other: 2 } });
      expect([refused.kind, deferred.kind]).toEqual(['busy', 'deferred']);
      expect((await s.getThread(tenantId, threadId))?.metadata).toEqual({ owner: 'ann', graph_id: 'agent' });
    });
  });
}
