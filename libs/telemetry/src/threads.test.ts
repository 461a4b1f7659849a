import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { instruments, tracingEnabled, withSpan } from './instruments.js';
import { exportLogLine } from './logs.js';
import { initThreadTelemetry, receiveThreadTelemetry, type ThreadTelemetryMessage } from './threads.js';
import { startTestTelemetry, type TestTelemetry } from './testing.js';

/** One end of a worker's port: what is posted on it is structured-cloned, as a MessagePort does, and kept. */
class FakePort extends EventEmitter {
  readonly posted: unknown[] = [];
  postMessage(m: unknown): void {
    this.posted.push(structuredClone(m));
  }
}

/** What a worker thread that recorded one run's worth of telemetry posted. */
async function recordInAWorker(traceparentOf: (traceId: string) => void): Promise<ThreadTelemetryMessage[]> {
  const port = new FakePort();
  const t = initThreadTelemetry(port, { tracing: true, metrics: true, logs: true }, {});
  expect(tracingEnabled()).toBe(true);
  await withSpan('agentloop.run', {}, async (span) => {
    traceparentOf(span.spanContext().traceId);
    instruments().toolCalls.add(1, { 'agentloop.tool': 'now', outcome: 'ok' });
    instruments().toolCallDuration.record(0.002, { 'agentloop.tool': 'now' });
    exportLogLine(JSON.stringify({ level: 30, time: 1, msg: 'tool call', tool: 'now' }));
  });
  // The main thread asks before it collects: everything recorded so far comes before the answer.
  port.emit('message', { t: 'telemetry.flush', id: 7 });
  await t.shutdown();
  expect(tracingEnabled()).toBe(false);
  return port.posted as ThreadTelemetryMessage[];
}

describe('telemetry of worker threads', () => {
  let test: TestTelemetry | undefined;
  afterEach(async () => {
    await test?.shutdown();
    test = undefined;
  });

  it('posts its spans, measurements and log records in batches, all of them before it answers a flush', async () => {
    let traceId = '';
    const posted = await recordInAWorker((id) => (traceId = id));
    const flushed = posted.findIndex((m) => m.t === 'telemetry.flushed');
    expect(posted[flushed]).toEqual({ t: 'telemetry.flushed', id: 7 });
    const batches = posted.slice(0, flushed).filter((m) => m.t === 'telemetry');
    expect(batches.flatMap((b) => b.spans.map((s) => [s.name, s.spanContext.traceId]))).toEqual([['agentloop.run', traceId]]);
    expect(batches.flatMap((b) => b.instruments.map(([, kind, , name]) => [kind, name]))).toEqual([
      ['counter', 'agentloop.tool.calls'],
      ['histogram', 'agentloop.tool.duration'],
    ]);
    expect(batches.flatMap((b) => b.logs.map((l) => [l.body, l.spanContext?.traceId]))).toEqual([['tool call', traceId]]);
  });

  it("exports two threads' telemetry with the main thread's: one series per counter, summed; spans and log records in their trace", async () => {
    const traceIds: string[] = [];
    const fromA = await recordInAWorker((id) => traceIds.push(id));
    const fromB = await recordInAWorker((id) => traceIds.push(id));
    test = await startTestTelemetry('threads-test');
    // The main thread records the same counter itself too.
    instruments().toolCalls.add(1, { 'agentloop.tool': 'now', outcome: 'ok' });
    for (const posted of [fromA, fromB]) {
      const worker = new FakePort();
      receiveThreadTelemetry(worker);
      for (const m of posted) worker.emit('message', m);
    }
    await test.collect();
    expect(test.points('agentloop.tool.calls').map((p) => [p.attributes, p.value])).toEqual([[{ 'agentloop.tool': 'now', outcome: 'ok' }, 3]]);
    const duration = test.points('agentloop.tool.duration');
    expect(duration).toHaveLength(1);
    expect((duration[0]!.value as { count: number }).count).toBe(2);
    expect(test.spans().map((s) => s.spanContext().traceId)).toEqual(traceIds);
    expect(test.spans()[0]!.resource.attributes['service.name']).toBe('threads-test');
    expect(test.logRecords().map((l) => [l.body, l.spanContext?.traceId])).toEqual(traceIds.map((id) => ['tool call', id]));
  });

  it('a flush from the main thread waits for the worker to answer it', async () => {
    const worker = new FakePort();
    const receiver = receiveThreadTelemetry(worker);
    const answered = receiver.flush(5_000);
    expect(worker.posted).toEqual([{ t: 'telemetry.flush', id: 1 }]);
    expect(await Promise.race([answered.then(() => 'answered'), new Promise((r) => setTimeout(() => r('waiting'), 20))])).toBe('waiting');
    worker.emit('message', { t: 'telemetry.flushed', id: 1 });
    await answered;
  });
});
