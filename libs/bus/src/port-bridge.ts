/**
 * The other end of a PortBus / PortRunEventStream (port-bus.ts, port-events.ts): makes their
 * calls on this thread's MemoryBus (as a peer: a connection of its own) and MemoryRunEventStream,
 * and forwards the requests and events addressed to them. One bridge per port.
 */
import type { MessagePort } from 'node:worker_threads';
import { TimeoutError } from '@agentloop/core';
import { decodeErrorHeader } from './errors.js';
import type { MemoryBus } from './memory-bus.js';
import type { MemoryRunEventStream } from './memory-events.js';
import { toWireFailure, type PortCall, type PortEvent, type PublishedEvent } from './port-protocol.js';
import type { Subscription } from './types.js';

type Handled = Extract<PortCall, { t: 'handled' }>;

export interface PortBridge {
  /** Drops what the port side served or subscribed and stops answering it. */
  close(): Promise<void>;
}

export interface BridgeBusOptions {
  /**
   * Do not send the port side's own publications back to it (MemoryBus `noEcho`): for a
   * ThreadBus, which delivers them to its thread's subscribers itself, in order with its
   * thread's local replies.
   */
  noEcho?: boolean;
}

/** Serves the PortBus on the other end of `port` from `hub`'s network. */
export function bridgeBus(port: MessagePort, hub: MemoryBus, opts: BridgeBusOptions = {}): PortBridge {
  const peer = hub.peer(opts.noEcho ? { noEcho: true } : {});
  const subs = new Map<number, Subscription>();
  const calls = new Map<number, (r: Handled) => void>();
  let nextCid = 0;
  const post = (e: PortEvent) => port.postMessage(e);
  const answer = (id: number, work: () => Promise<unknown>) =>
    work().then(
      (value) => post({ t: 'done', id, value }),
      (err: unknown) => post({ t: 'done', id, error: toWireFailure(err) }),
    );

  port.on('message', (m: PortCall) => {
    switch (m.t) {
      case 'request':
        return void answer(m.id, () => peer.request(m.subject, m.data, { timeoutMs: m.timeoutMs, headers: m.headers, idempotent: m.idempotent }));
      case 'serve':
        return void answer(m.id, async () => {
          const sub = await peer.serve(m.subject, { queue: m.queue }, async (msg) => {
            const cid = ++nextCid;
            const r = await new Promise<Handled>((resolve) => {
              calls.set(cid, resolve);
              post({ t: 'handle', cid, sid: m.sid, msg });
            });
            if (r.data) return r.data;
            if (r.errorHeader !== undefined) throw decodeErrorHeader(msg.subject, r.errorHeader);
            throw new TimeoutError(`Deadline of the request to ${msg.subject} passed`);
          });
          subs.set(m.sid, sub);
        });
      case 'subscribe':
        return void answer(m.id, async () => {
          subs.set(m.sid, await peer.subscribe(m.subject, (msg) => post({ t: 'event', sid: m.sid, msg })));
        });
      case 'unsubscribe':
        return void answer(m.id, async () => {
          await subs.get(m.sid)?.unsubscribe();
          subs.delete(m.sid);
        });
      case 'publish':
        return void peer.publish(m.subject, m.data, m.headers);
      case 'handled':
        calls.get(m.cid)?.(m);
        calls.delete(m.cid);
        return;
      case 'close':
        return void answer(m.id, () => closeBridge());
    }
  });
  // The port side is gone (its thread ended): nothing it served may keep answering from here.
  const release = () => {
    for (const resolve of calls.values())
      resolve({ t: 'handled', cid: 0, errorHeader: JSON.stringify({ code: 'UNAVAILABLE', message: 'the serving thread ended', retryable: true }) });
    calls.clear();
  };
  // No new requests or events for the port side; the ones it is handling still get its replies.
  let closing: Promise<void> | undefined;
  const closeBridge = () =>
    (closing ??= (async () => {
      await Promise.allSettled([...subs.values()].map((s) => s.unsubscribe()));
      subs.clear();
      await peer.close();
    })());
  port.on('close', () => {
    release();
    void closeBridge();
  });
  return { close: closeBridge };
}

/** Serves the PortRunEventStream on the other end of `port` from `stream`. */
export function bridgeRunEvents(port: MessagePort, stream: MemoryRunEventStream): PortBridge {
  const readers = new Map<number, AbortController>();
  const post = (e: PortEvent) => port.postMessage(e);
  const answer = (id: number, work: () => Promise<unknown>) =>
    work().then(
      (value) => post({ t: 'done', id, value }),
      (err: unknown) => post({ t: 'done', id, error: toWireFailure(err) }),
    );
  const read = async (sid: number, runId: string, afterId: number, signal: AbortSignal) => {
    try {
      for await (const event of stream.subscribe(runId, { afterId, signal })) post({ t: 'events.item', sid, event });
    } catch {
      // The port side validated the run id; what remains is the stream closing: the reader just ends.
    } finally {
      readers.delete(sid);
      post({ t: 'events.end', sid });
    }
  };
  port.on('message', (m: PortCall) => {
    switch (m.t) {
      case 'events.publish':
        // Each event in its turn (publishJson numbers it before it yields), one answer for all.
        return void answer(m.id, () =>
          Promise.all(
            m.events.map((e) =>
              stream.publishJson(e.runId, e.threadId, e.event, e.dataJson).then(
                (id): PublishedEvent => ({ id }),
                (err: unknown): PublishedEvent => ({ error: toWireFailure(err) }),
              ),
            ),
          ),
        );
      case 'events.subscribe':
        return void answer(m.id, async () => {
          const ac = new AbortController();
          readers.set(m.sid, ac);
          void read(m.sid, m.runId, m.afterId, ac.signal);
        });
      case 'events.unsubscribe':
        readers.get(m.sid)?.abort();
        return;
      case 'events.purge':
        return void answer(m.id, () => stream.purge(m.runId));
    }
  });
  const close = async () => {
    for (const ac of readers.values()) ac.abort();
    readers.clear();
  };
  port.on('close', () => void close());
  return { close };
}
