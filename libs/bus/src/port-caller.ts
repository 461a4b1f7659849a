import type { MessagePort } from 'node:worker_threads';
import { UnavailableError } from '@agentloop/core';
import { fromWireFailure, type PortCall, type PortEvent } from './port-protocol.js';

type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void };
/** PortCall variants that expect a `done` back (they carry an id). */
type CallWithId = Extract<PortCall, { id: number }>;
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/**
 * The port side's end of a MessagePort: calls that wait for their `done`, and the other events
 * handed to `onEvent`. When the port closes (the other thread ended), pending calls fail with
 * UnavailableError instead of waiting for ever.
 */
export class PortCaller {
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private gone = false;

  constructor(
    readonly port: MessagePort,
    onEvent: (e: Exclude<PortEvent, { t: 'done' }>) => void,
  ) {
    port.on('message', (e: PortEvent) => {
      if (e.t !== 'done') return onEvent(e);
      const p = this.pending.get(e.id);
      if (!p) return;
      this.pending.delete(e.id);
      if (e.error) p.reject(fromWireFailure(e.error));
      else p.resolve(e.value);
    });
    port.on('close', () => {
      this.gone = true;
      for (const p of this.pending.values()) p.reject(new UnavailableError('The other thread closed its port'));
      this.pending.clear();
    });
  }

  call<T>(msg: WithoutId<CallWithId>): Promise<T> {
    if (this.gone) return Promise.reject(new UnavailableError('The other thread closed its port'));
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.port.postMessage({ ...msg, id } as PortCall);
    });
  }

  post(msg: Exclude<PortCall, { id: number }>): void {
    if (!this.gone) this.port.postMessage(msg);
  }

  /** Lets the process exit while nothing is pending on this port. */
  unref(): void {
    this.port.unref();
  }
}
