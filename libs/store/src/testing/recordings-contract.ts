/** The run recordings part of the `Store` contract (issue 17), run by `storeContract` on each backend. */
import { describe, expect, it } from 'vitest';
import type { StoreTestHarness } from './contract.js';
import { uid, useMigratedStore } from './fixture.js';

export function recordingsContract(harness: StoreTestHarness): void {
  describe(`Run recordings (${harness.name})`, () => {
    const store = useMigratedStore(harness);

    it('lists a run’s events in write order with their payloads, scoped to the tenant', async () => {
      const t = uid('t');
      const run = uid('run');
      const big = 'x'.repeat(200_000);
      await store().appendRecordingEvent({ tenantId: t, runId: run, key: 'model:0', kind: 'model_call', step: 0, payload: { request: { big } } });
      await store().appendRecordingEvent({ tenantId: t, runId: run, key: 'tool:c1', kind: 'tool_call', step: 0, payload: { name: 'read_file' } });
      await store().appendRecordingEvent({ tenantId: t, runId: run, key: 'model:1', kind: 'model_call', step: 1, payload: { n: 2 } });
      const events = await store().listRecordingEvents(t, run);
      expect(events.map((e) => [e.key, e.kind, e.step])).toEqual([
        ['model:0', 'model_call', 0],
        ['tool:c1', 'tool_call', 0],
        ['model:1', 'model_call', 1],
      ]);
      expect((events[0]!.payload.request as { big: string }).big).toHaveLength(200_000);
      expect(events[1]!.createdAt).toBeInstanceOf(Date);
      expect(await store().listRecordingEvents(uid('other'), run)).toEqual([]);
    });

    it('keeps the first write of an event key (a step re-run after a crash)', async () => {
      const t = uid('t');
      const run = uid('run');
      await store().appendRecordingEvent({ tenantId: t, runId: run, key: 'model:0', kind: 'model_call', step: 0, payload: { v: 1 } });
      await store().appendRecordingEvent({ tenantId: t, runId: run, key: 'model:0', kind: 'model_call', step: 0, payload: { v: 2 } });
      const events = await store().listRecordingEvents(t, run);
      expect(events.map((e) => e.payload)).toEqual([{ v: 1 }]);
    });
  });
}
