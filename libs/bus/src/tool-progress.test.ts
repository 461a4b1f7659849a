import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBus } from './memory-bus.js';
import { publishToolProgress, subscribeToolProgress, toolProgressSubject, type ToolProgress } from './tool-progress.js';
import { Headers } from './types.js';

const RUN = '3f1c2a9e-0000-4000-8000-000000000001';
let bus: MemoryBus;
afterEach(async () => {
  await bus?.close();
});

describe('tool progress', () => {
  it("delivers one call's progress of the tenant's run; other calls, tenants and malformed payloads are ignored", async () => {
    bus = new MemoryBus();
    const got: ToolProgress[] = [];
    const sub = await subscribeToolProgress(bus, { tenantId: 't1', runId: RUN, toolCallId: 'c1' }, (p) => got.push(p));
    await publishToolProgress(bus, 't1', RUN, { tool_call_id: 'c1', name: 'long', progress: 1, total: 3 });
    await publishToolProgress(bus, 't1', RUN, { tool_call_id: 'c2', name: 'long', progress: 9 });
    await publishToolProgress(bus, 't2', RUN, { tool_call_id: 'c1', name: 'long', progress: 7 });
    // JSON (what this subject carried before it was protobuf) and bytes that are no ToolProgress are ignored.
    await bus.publish(toolProgressSubject(RUN), new TextEncoder().encode('{"tool_call_id":"c1","progress":"x"}'), { [Headers.tenant]: 't1' });
    await bus.publish(toolProgressSubject(RUN), new Uint8Array([0xff, 0xff, 0xff]), { [Headers.tenant]: 't1' });
    await publishToolProgress(bus, 't1', RUN, { tool_call_id: 'c1', name: 'long', progress: 2, total: 3, message: 'half' });
    await sub.unsubscribe();
    await publishToolProgress(bus, 't1', RUN, { tool_call_id: 'c1', name: 'long', progress: 3, total: 3 });
    expect(got).toEqual([
      { tool_call_id: 'c1', name: 'long', progress: 1, total: 3 },
      { tool_call_id: 'c1', name: 'long', progress: 2, total: 3, message: 'half' },
    ]);
  });

  it('refuses a run id that is not one subject token', () => {
    expect(() => toolProgressSubject('a.b')).toThrow(/Invalid run id/);
  });
});
