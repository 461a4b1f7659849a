import { fromBinary, RunEventSchema } from '@agentloop/proto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { ConnectionState } from './connection-state.js';
import { END_EVENT } from './run-id.js';
import { eventNameOf, framesOf } from './run-event-batch.js';
import type { RunEndWatch, RunEndWatchResult } from './types.js';

/**
 * A live watch of one run's `error` and `end` events over a plain NATS subscription on the run's
 * event subject: JetStream stores each event and NATS also delivers it to core subscribers of the
 * subject. Unlike an ordered JetStream consumer (created, pulled from and deleted per wait: three
 * API requests and server-side consumer state), this costs one SUB and one UNSUB, which matters for
 * `runs.wait` (issue 9, bench/throughput "Cluster mode"). It replays nothing, so a waiter must
 * read the run's record after `ready` (see RunEndWatch); a dropped connection may lose events, so
 * it then reports `lost` and the waiter falls back to the replaying subscription.
 */
export function watchRunEnd(nc: NatsConnection, conn: ConnectionState, subject: string, signal: AbortSignal): RunEndWatch {
  let sub: Subscription | undefined;
  let settle: (r: RunEndWatchResult) => void = () => undefined;
  const done = new Promise<RunEndWatchResult>((resolve) => (settle = resolve));
  const lost = conn.lostAfter(conn.epoch);
  let closed = false;
  // Called by `finish` and again by the waiter when it is done with the watch: nats.js writes an
  // UNSUB for every call, so only the first unsubscribes (issue 9: one NATS write per runs.wait).
  const close = () => {
    if (closed) return;
    closed = true;
    lost.cancel();
    signal.removeEventListener('abort', onAbort);
    sub?.unsubscribe();
  };
  const finish = (r: RunEndWatchResult) => {
    close();
    settle(r);
  };
  const onAbort = () => finish({ kind: 'aborted' });
  if (signal.aborted) {
    settle({ kind: 'aborted' });
    return { ready: Promise.resolve(), done, close: () => undefined };
  }
  signal.addEventListener('abort', onAbort, { once: true });
  void lost.promise.then(() => finish({ kind: 'lost' }));
  let errorJson: string | undefined;
  try {
    sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return finish({ kind: 'lost' });
        // A message may hold several of the run's events (run-event-batch.ts), `end` among them;
        // only an `error` is decoded whole, the others by their name alone.
        let frames;
        try {
          frames = framesOf(msg.data);
        } catch {
          return; // undecodable: the replaying subscription skips it too
        }
        for (const frame of frames) {
          const name = eventNameOf(frame);
          if (name === 'error') {
            try {
              errorJson = fromBinary(RunEventSchema, frame).dataJson;
            } catch {
              // undecodable: skipped, as the replaying subscription does
            }
          } else if (name === END_EVENT) return finish({ kind: 'end', ...(errorJson !== undefined ? { errorJson } : {}) });
        }
      },
    });
  } catch {
    finish({ kind: 'lost' });
    return { ready: Promise.resolve(), done, close };
  }
  // The server has registered the SUB once a flush (PING/PONG) returns: events published after that are delivered.
  // A flush waiting for a reconnect does not hold the waiter: the watch is over (lost) by then.
  const ready = Promise.race([nc.flush().catch(() => finish({ kind: 'lost' })), done]).then(() => undefined);
  return { ready, done, close };
}
