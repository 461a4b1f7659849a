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

    it('expands compact model calls: messages from an earlier event plus their own, tools from the tenant’s stored set', async () => {
      const t = uid('t');
      const run = uid('run');
      const tools = [{ name: 'read_file', description: 'Read', parameters: '{"type":"object"}' }];
      const hash = await store().saveRecordingToolset(t, JSON.stringify(tools));
      expect(await store().saveRecordingToolset(t, JSON.stringify(tools))).toBe(hash);
      const model = { label: 'base' };
      const m = (n: number) => ({ type: 'human', content: `m${n}` });
      const compact = (key: string, step: number, request: Record<string, unknown>) =>
        store().appendRecordingEvent({ tenantId: t, runId: run, key, kind: 'model_call', step, payload: { request, response: { n: step } }, compact: true });
      expect(await compact('model:0', 0, { model, messages: [m(0), m(1)], $stored: { tools_set: hash } })).toBe(true);
      expect(await compact('model:1', 1, { model, messages: [m(2), m(3)], $stored: { base: { event: 'model:0', keep: 2 }, tools_set: hash } })).toBe(true);
      // A prefix that differs after its first message (history trimmed): one message of the base.
      await compact('model:2', 2, { model, messages: [m(9)], $stored: { base: { event: 'model:1', keep: 1 }, tools_set: hash } });
      expect(await compact('model:2', 2, { model, messages: [], $stored: { tools_set: hash } })).toBe(false);
      // Its own first message (a new system prompt), then the base's from the second on.
      await compact('model:3', 3, { model, messages: [m(7), m(8)], $stored: { base: { event: 'model:1', keep: 3, head: 1 }, tools_set: hash } });
      const events = await store().listRecordingEvents(t, run);
      expect(events.map((e) => e.payload)).toEqual([
        { request: { model, messages: [m(0), m(1)], tools }, response: { n: 0 } },
        { request: { model, messages: [m(0), m(1), m(2), m(3)], tools }, response: { n: 1 } },
        { request: { model, messages: [m(0), m(9)], tools }, response: { n: 2 } },
        { request: { model, messages: [m(7), m(1), m(2), m(8)], tools }, response: { n: 3 } },
      ]);
    });

    it('keeps tool sets per tenant, and refuses the reserved request key from any other writer', async () => {
      const a = uid('a');
      const b = uid('b');
      const run = uid('run');
      const hash = await store().saveRecordingToolset(a, '[{"name":"mine"}]');
      await store().appendRecordingEvent({
        tenantId: b,
        runId: run,
        key: 'model:0',
        kind: 'model_call',
        step: 0,
        payload: { request: { messages: [], $stored: { tools_set: hash } } },
        compact: true,
      });
      await expect(store().listRecordingEvents(b, run)).rejects.toThrow(/missing tool set/);
      await expect(
        store().appendRecordingEvent({
          tenantId: a,
          runId: run,
          key: 'model:0',
          kind: 'model_call',
          step: 0,
          payload: { request: { messages: [], $stored: {} } },
        }),
      ).rejects.toThrow(/\$stored is reserved/);
    });
  });
}
