import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@agentloop/core';
import { startTestTelemetry } from './testing.js';
import { traceLogFields, withSpan } from './instruments.js';
import { logTelemetry } from './logs.js';

/** A logger whose lines land in `lines`, with the trace mixin the services use. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'test', destination, ...logTelemetry }) };
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

  it('exports each line as a log record in the trace and span it was logged in, with its fields', async () => {
    await using t = await startTestTelemetry('log-export');
    const { lines, logger } = capture();
    await withSpan('work', {}, async () => {
      logger.child({ component: 'x', run_id: 'run-1' }).warn({ tool: 'write_file' }, 'inside');
    });
    logger.error('outside');
    const span = t.spans().find((s) => s.name === 'work')!;
    const records = t.logRecords().map((r) => ({
      body: r.body,
      severity: r.severityText,
      trace_id: r.spanContext?.traceId,
      span_id: r.spanContext?.spanId,
      attributes: r.attributes,
    }));
    expect(records).toEqual([
      {
        body: 'inside',
        severity: 'WARN',
        trace_id: span.spanContext().traceId,
        span_id: span.spanContext().spanId,
        attributes: { service: 'test', component: 'x', run_id: 'run-1', tool: 'write_file' },
      },
      { body: 'outside', severity: 'ERROR', trace_id: undefined, span_id: undefined, attributes: { service: 'test' } },
    ]);
    // The line itself still goes to the destination, with the same ids.
    expect(lines[0]).toMatchObject({ msg: 'inside', trace_id: span.spanContext().traceId });
  });

  it('adds nothing while tracing is off', () => {
    const { lines, logger } = capture();
    logger.info('plain');
    expect(traceLogFields()).toEqual({});
    expect(lines[0]).not.toHaveProperty('trace_id');
  });
});
