import { SpanKind, extractTraceContext, failSpan, injectTraceContext, instruments, tracingEnabled, withSpan } from '@agentloop/telemetry';
import { Headers, type BusMessage, type RequestOptions } from './types.js';

export type MessagingSystem = 'nats' | 'memory' | 'port';

/** Error code of a failed request for metrics (bounded set: the error class name or its code). */
function outcomeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z_]{2,40}$/.test(code)) return code;
  return err instanceof Error ? err.name : 'Error';
}

/**
 * A bus request as a CLIENT span (`<subject> request`), with the trace context
 * injected into the request's headers so the handler's span joins the trace.
 * A `traceparent` header given by the caller is the parent when no span is active.
 */
export async function tracedRequest(
  system: MessagingSystem,
  subject: string,
  opts: RequestOptions,
  send: (opts: RequestOptions) => Promise<BusMessage>,
): Promise<BusMessage> {
  const started = performance.now();
  const given = opts.headers?.[Headers.traceparent];
  let outcome = 'ok';
  try {
    // Tracing off: no span to start and no context to carry, so the request goes as it is (a
    // caller's own `traceparent` header included) — no attribute bag, no copies of the headers.
    if (!tracingEnabled()) return await send(opts);
    return await withSpan(
      `${subject} request`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'messaging.system': system, 'messaging.destination.name': subject, 'messaging.operation.type': 'send' },
        ...(given ? { parent: extractTraceContext(given) } : {}),
      },
      async () => send({ ...opts, headers: injectTraceContext({ ...opts.headers }) }),
    );
  } catch (err) {
    outcome = outcomeOf(err);
    throw err;
  } finally {
    instruments().busRequestDuration.record((performance.now() - started) / 1000, {
      'messaging.system': system,
      'messaging.destination.name': subject,
      outcome,
    });
  }
}

/**
 * Runs a handler invocation as a SERVER span (`<subject> process`) whose parent
 * is the trace context of the request's headers. `failed` tells whether the
 * outcome was an error reply.
 */
export async function tracedHandle<T>(msg: BusMessage, fn: () => Promise<T>, failed: (out: T) => unknown): Promise<T> {
  // Tracing off: the headers' trace context would be extracted only to parent a span nobody records.
  if (!tracingEnabled()) return fn();
  return withSpan(
    `${msg.subject} process`,
    {
      kind: SpanKind.SERVER,
      parent: extractTraceContext(msg.headers),
      attributes: {
        'messaging.destination.name': msg.subject,
        'messaging.operation.type': 'process',
        ...(msg.headers[Headers.tenant] ? { 'agentloop.tenant': msg.headers[Headers.tenant] } : {}),
      },
    },
    async (span) => {
      const out = await fn();
      const err = failed(out);
      if (err) failSpan(span, err);
      return out;
    },
  );
}
