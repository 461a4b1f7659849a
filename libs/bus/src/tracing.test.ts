import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestTelemetry, type TestTelemetry } from '@agentloop/telemetry';
import { MemoryBus } from './memory-bus.js';
import { Headers } from './types.js';

let t: TestTelemetry;
beforeAll(async () => {
  t = await startTestTelemetry('bus-test');
});
afterAll(async () => {
  await t.shutdown();
});

describe('bus tracing', () => {
  it('a request is a client span and its handling a server span of the same trace, with the traceparent passed in the headers', async () => {
    const bus = new MemoryBus();
    let seen: string | undefined;
    await bus.serve('svc.echo', { queue: 'svc' }, async (msg) => {
      seen = msg.headers[Headers.traceparent];
      return msg.data;
    });
    await bus.request('svc.echo', new Uint8Array([1]), { timeoutMs: 1000, headers: { [Headers.tenant]: 'acme' } });
    await bus.close();
    const client = t.spans().find((s) => s.name === 'svc.echo request')!;
    const server = t.spans().find((s) => s.name === 'svc.echo process')!;
    expect(client.kind).toBe(SpanKind.CLIENT);
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(server.spanContext().traceId).toBe(client.spanContext().traceId);
    expect(server.parentSpanContext?.spanId).toBe(client.spanContext().spanId);
    expect(seen).toBe(`00-${client.spanContext().traceId}-${client.spanContext().spanId}-01`);
    expect(server.attributes['agentloop.tenant']).toBe('acme');
  });

  it('a failed handler marks the server span as an error and the request is counted with its outcome', async () => {
    const bus = new MemoryBus();
    await bus.serve('svc.fail', { queue: 'svc' }, async () => {
      throw new Error('boom');
    });
    await expect(bus.request('svc.fail', new Uint8Array(), { timeoutMs: 1000 })).rejects.toThrow('boom');
    await expect(bus.request('svc.none', new Uint8Array(), { timeoutMs: 1000 })).rejects.toThrow();
    await bus.close();
    const server = t.spans().find((s) => s.name === 'svc.fail process')!;
    expect(server.status.code).toBe(2);
    await t.collect();
    const outcomes = t.points('agentloop.bus.request.duration').map((p) => [p.attributes['messaging.destination.name'], p.attributes.outcome]);
    expect(outcomes).toEqual(
      expect.arrayContaining([
        ['svc.echo', 'ok'],
        ['svc.fail', expect.any(String)],
        ['svc.none', 'UNAVAILABLE'],
      ]),
    );
  });
});
