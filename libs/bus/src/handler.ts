import { TimeoutError } from '@agentloop/core';
import type { Logger } from '@agentloop/core';
import { encodeErrorHeader } from './errors.js';
import { parseDeadline } from './subject.js';
import { tracedHandle } from './tracing.js';
import { Headers, type BusMessage, type RequestHandler } from './types.js';

/** What a handler invocation produced: a payload, an encoded error, or nothing (deadline already passed). */
export type HandlerOutcome = { ok: true; data: Uint8Array } | { ok: false; errorHeader: string } | undefined;

/**
 * Runs a request handler with the request's deadline: the context signal is
 * aborted when the deadline passes, and a request whose deadline has already
 * passed is not handled at all, and one that ends after it is not answered
 * (its caller has given up).
 */
export function invokeHandler(handler: RequestHandler, msg: BusMessage, logger: Logger): Promise<HandlerOutcome> {
  return tracedHandle(
    msg,
    () => invokeUntraced(handler, msg, logger),
    (out) => (out && !out.ok ? new Error(out.errorHeader.slice(0, 500)) : undefined),
  );
}

async function invokeUntraced(handler: RequestHandler, msg: BusMessage, logger: Logger): Promise<HandlerOutcome> {
  const deadline = parseDeadline(msg.headers[Headers.deadline]);
  const ac = new AbortController();
  // Past the deadline the caller has given up: a late reply would only race its timeout.
  const expired = () => deadline !== undefined && (ac.signal.aborted || Date.now() >= deadline);
  let timer: NodeJS.Timeout | undefined;
  if (deadline !== undefined) {
    const left = deadline - Date.now();
    if (left <= 0) {
      logger.debug({ subject: msg.subject }, 'request deadline already passed; not handled');
      return undefined;
    }
    timer = setTimeout(() => ac.abort(new TimeoutError(`Deadline of the request to ${msg.subject} passed`)), left);
    timer.unref();
  }
  try {
    const data = await handler(msg, { signal: ac.signal, deadline });
    return expired() ? undefined : { ok: true, data };
  } catch (err) {
    if (expired()) return undefined;
    logger.debug({ subject: msg.subject, err }, 'request handler failed');
    return { ok: false, errorHeader: encodeErrorHeader(err) };
  } finally {
    clearTimeout(timer);
  }
}

/** Tracks running promises so `close()` can wait for them. */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();

  track<T>(p: Promise<T>): Promise<T> {
    this.running.add(p);
    const done = () => this.running.delete(p);
    p.then(done, done);
    return p;
  }

  get size(): number {
    return this.running.size;
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

export const copyBytes = (b: Uint8Array): Uint8Array => new Uint8Array(b);
