/** The ops console's reads of the `Store` contract (issue 16), run by `storeContract` on each backend. */
import { describe, expect, it } from 'vitest';
import { RunLifecycle } from '../run-lifecycle.js';
import type { StoreTestHarness } from './contract.js';
import { uid, useMigratedStore } from './fixture.js';

export function consoleContract(harness: StoreTestHarness): void {
  describe(`Store console reads (${harness.name})`, () => {
    const store = useMigratedStore(harness);

    /** A run on a new thread of `tenantId`, ended with `status`; `waitsForHuman` leaves the thread interrupted. */
    async function endedRun(tenantId: string, waitsForHuman: boolean) {
      const s = store();
      const lifecycle = new RunLifecycle(s);
      const thread = await s.createThread({ threadId: uid('th'), tenantId });
      const runId = uid('run');
      const admitted = await lifecycle.admit({ run: { runId, threadId: thread.threadId, tenantId, assistantId: 'agent' }, whenBusy: 'reject' });
      expect(admitted.kind).toBe('admitted');
      await lifecycle.start((await s.getRun(tenantId, runId))!);
      const values = waitsForHuman ? { messages: [], __interrupt__: [{ id: 'i1', value: { type: 'tool_approval', tool: 'write_file' } }] } : { messages: [] };
      await lifecycle.end({ tenantId, runId, status: 'success', values, waitsForHuman, cause: 'finished' });
      return { threadId: thread.threadId, runId };
    }

    it("lists runs across threads, one tenant's or every tenant's, newest first, by status", async () => {
      const a = uid('ta');
      const b = uid('tb');
      const since = Date.now() - 1;
      const a1 = await endedRun(a, false);
      const a2 = await endedRun(a, true);
      const b1 = await endedRun(b, false);
      expect((await store().listConsoleRuns({ tenantId: a, limit: 10, offset: 0 })).map((r) => r.runId)).toEqual([a2.runId, a1.runId]);
      expect(await store().listConsoleRuns({ tenantId: a, status: 'running', limit: 10, offset: 0 })).toEqual([]);
      expect((await store().listConsoleRuns({ tenantId: a, limit: 1, offset: 1 })).map((r) => r.runId)).toEqual([a1.runId]);
      const every = (await store().listConsoleRuns({ limit: 1000, offset: 0 })).map((r) => r.runId);
      expect(every).toEqual(expect.arrayContaining([a1.runId, a2.runId, b1.runId]));
      const changed = (await store().listRunsChangedSince(since, 1000)).map((r) => r.runId);
      expect(changed).toEqual(expect.arrayContaining([a1.runId, a2.runId, b1.runId]));
      expect(await store().findRunAnyTenant(b1.runId)).toMatchObject({ tenantId: b, runId: b1.runId });
      expect(await store().findRunAnyTenant(uid('nope'))).toBeUndefined();
    });

    it("lists a tenant's interrupted threads only, and every tenant's without one", async () => {
      const a = uid('ta');
      const b = uid('tb');
      const waiting = await endedRun(a, true);
      await endedRun(a, false);
      const other = await endedRun(b, true);
      const mine = await store().listInterruptedThreads(a, 100);
      expect(mine.map((t) => t.threadId)).toEqual([waiting.threadId]);
      expect(mine[0]!.values).toMatchObject({ __interrupt__: [{ id: 'i1' }] });
      const all = (await store().listInterruptedThreads(undefined, 1000)).map((t) => t.threadId);
      expect(all).toEqual(expect.arrayContaining([waiting.threadId, other.threadId]));
    });
  });
}
