/**
 * The messages a PortBus / PortRunEventStream (one side of a `MessagePort`, e.g. in a worker
 * thread) exchanges with its bridge (the other side, next to a MemoryBus and a
 * MemoryRunEventStream): plain objects, structured-cloned by the port. Every request of the port
 * side carries an `id` and gets exactly one `done` back, in order with everything else on the port.
 */
import { AgentLoopError, TimeoutError, UnavailableError, type ErrorCode } from '@agentloop/core';
import { RemoteError } from './errors.js';
import type { BusMessage, StoredRunEvent } from './types.js';

/** Port side → bridge. */
export type PortCall =
  | { t: 'request'; id: number; subject: string; data: Uint8Array; headers: Record<string, string>; timeoutMs: number; idempotent?: boolean }
  | { t: 'serve'; id: number; sid: number; subject: string; queue: string }
  | { t: 'subscribe'; id: number; sid: number; subject: string }
  | { t: 'unsubscribe'; id: number; sid: number }
  | { t: 'publish'; subject: string; data: Uint8Array; headers: Record<string, string> }
  | { t: 'close'; id: number }
  /** A reply to a `handle` of the bridge: the handler's payload, its encoded error, or nothing (deadline passed). */
  | { t: 'handled'; cid: number; data?: Uint8Array; errorHeader?: string }
  /** Events published in one turn of the port side's event loop, in order; `done`'s value is a PublishedEvent per event. */
  | { t: 'events.publish'; id: number; events: PublishedEventCall[] }
  | { t: 'events.subscribe'; id: number; sid: number; runId: string; afterId: number }
  | { t: 'events.unsubscribe'; sid: number }
  | { t: 'events.purge'; id: number; runId: string };

export interface PublishedEventCall {
  runId: string;
  threadId: string;
  event: string;
  dataJson: string;
}

/** What became of one event of an `events.publish`: its id in the log, or why it was not stored. */
export type PublishedEvent = { id: number } | { error: WireFailure };

/** Bridge → port side. */
export type PortEvent =
  | { t: 'done'; id: number; value?: unknown; error?: WireFailure }
  | { t: 'handle'; cid: number; sid: number; msg: BusMessage }
  | { t: 'event'; sid: number; msg: BusMessage }
  | { t: 'events.item'; sid: number; event: StoredRunEvent }
  | { t: 'events.end'; sid: number };

/** A failure as it crosses the port, so that the port side throws the same typed error the bridge caught. */
export type WireFailure =
  | { kind: 'timeout' | 'unavailable'; message: string }
  | { kind: 'remote'; subject: string; remoteCode: string; message: string; retryable: boolean }
  | { kind: 'error'; code: ErrorCode; message: string; retryable: boolean };

export function toWireFailure(err: unknown): WireFailure {
  if (err instanceof TimeoutError) return { kind: 'timeout', message: err.message };
  if (err instanceof UnavailableError) return { kind: 'unavailable', message: err.message };
  if (err instanceof RemoteError) return { kind: 'remote', subject: err.subject, remoteCode: err.remoteCode, message: err.message, retryable: err.retryable };
  if (err instanceof AgentLoopError) return { kind: 'error', code: err.code, message: err.message, retryable: err.retryable };
  return { kind: 'error', code: 'INTERNAL', message: err instanceof Error ? err.message : String(err), retryable: false };
}

export function fromWireFailure(f: WireFailure): Error {
  switch (f.kind) {
    case 'timeout':
      return new TimeoutError(f.message);
    case 'unavailable':
      return new UnavailableError(f.message);
    case 'remote':
      return new RemoteError(f.subject, f.remoteCode, f.message, f.retryable);
    case 'error':
      return new AgentLoopError(f.code, f.message, { retryable: f.retryable });
  }
}
