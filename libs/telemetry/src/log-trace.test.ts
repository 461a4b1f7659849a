import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@agentloop/core';
import { startTestTelemetry } from './testing.js';
import { traceLogFields, withSpan } from './instruments.js';

/** A logger whose lines land in `lines`, with the trace mixin the services use. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'test', destination, mixin: traceLogFields }) };
}

describe('trace ids in log lines', () => {
  it('a line logged inside a span carries its trace_id and span_id; one outside carries none', async () => {
    await using t = await startTestTelemetry('log-trace');
    const { lines, logger } = capture();
    logger.info('before');
    await withSpan('work', {}, async () => {
      logger.child({ component: 'x' }).info('inside');
    });
    logger.info('after');
    await new Promise((r) => setImmediate(r));
    const span = t.spans().find((s) => s.name === 'work')!;
    expect(lines.map((l) => [l.msg, l.trace_id, l.span_id])).toEqual([
      ['before', undefined, undefined],
      ['inside', span.spanContext().traceId, span.spanContext().spanId],
      ['after', undefined, undefined],
    ]);
  });

  it('adds nothing while tracing is off', () => {
    const { lines, logger } = capture();
    logger.info('plain');
    expect(traceLogFields()).toEqual({});
    expect(lines[0]).not.toHaveProperty('trace_id');
  });
});
