import { describe, expect, it } from 'vitest';
import { tracingEnabled } from '@agentloop/telemetry';
import { MemoryBus } from './memory-bus.js';
import { Headers } from './types.js';

// No telemetry started in this file: the bus takes its tracing-off path (tracing.ts).
describe('bus requests with tracing off', () => {
  it('carry the caller’s headers, traceparent included, to the handler unchanged, and failures still reach the caller', async () => {
    expect(tracingEnabled()).toBe(false);
    const bus = new MemoryBus();
    let seen: Record<string, string> | undefined;
    await bus.serve('svc.echo', { queue: 'svc' }, async (msg) => {
      seen = { ...msg.headers };
      return msg.data;
    });
    await bus.serve('svc.fail', { queue: 'svc' }, async () => {
      throw new Error('boom');
    });
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const reply = await bus.request('svc.echo', new Uint8Array([7]), {
      timeoutMs: 1000,
      headers: { [Headers.tenant]: 'acme', [Headers.traceparent]: traceparent },
    });
    expect([...reply.data]).toEqual([7]);
    expect(seen?.[Headers.traceparent]).toBe(traceparent);
    expect(seen?.[Headers.tenant]).toBe('acme');
    await expect(bus.request('svc.fail', new Uint8Array(), { timeoutMs: 1000 })).rejects.toThrow('boom');
    await bus.close();
  });
});
