import { startNats, type DevServer } from '@agentloop/devservers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJetStreamRunEventStream, type JetStreamRunEventStream } from './jetstream-events.js';
import { connectNatsBus, type NatsBus } from './nats-bus.js';
import { connectionState } from './connection-state.js';
import { watchRunEnd } from './run-end-watch.js';

let server: DevServer;
let bus: NatsBus;
let events: JetStreamRunEventStream;
beforeAll(async () => {
  server = await startNats({ jetstream: true });
  bus = await connectNatsBus({ url: server.url, name: 'run-end-watch-test' });
  events = await createJetStreamRunEventStream({ bus, streamName: 'RUN_EVENTS_WATCH', subjectPrefix: 'watch.events' });
});
afterAll(async () => {
  await events?.close();
  await bus?.close();
  await server?.stop();
});

describe('JetStreamRunEventStream.watchEnd', () => {
  it('reports the end published after it is ready, with the error event seen before it', async () => {
    const watch = events.watchEnd('run-w1', AbortSignal.timeout(10_000));
    await watch.ready;
    await events.publish('run-w1', 't', 'values', { n: 1 });
    await events.publish('run-w1', 't', 'error', { error: 'ValueError', message: 'boom' });
    await events.publish('run-w1', 't', 'end', null);
    const r = await watch.done;
    expect(r.kind).toBe('end');
    expect(r.kind === 'end' && JSON.parse(r.errorJson ?? 'null')).toEqual({ error: 'ValueError', message: 'boom' });
  });

  it("ignores other runs' events and ends without an error for a run that had none", async () => {
    const watch = events.watchEnd('run-w2', AbortSignal.timeout(10_000));
    await watch.ready;
    await events.publish('run-other', 't', 'error', { error: 'E', message: 'not mine' });
    await events.publish('run-other', 't', 'end', null);
    await events.publish('run-w2', 't', 'end', null);
    expect(await watch.done).toEqual({ kind: 'end' });
  });

  it('replays nothing: an end published before the watch is not reported', async () => {
    await events.publish('run-w3', 't', 'end', null);
    const ac = new AbortController();
    const watch = events.watchEnd('run-w3', ac.signal);
    await watch.ready;
    // The watch waits on; only the caller's signal ends it.
    const raced = await Promise.race([watch.done, events.publish('run-w3-other', 't', 'end', null).then(() => 'still waiting' as const)]);
    expect(raced).toBe('still waiting');
    ac.abort();
    expect(await watch.done).toEqual({ kind: 'aborted' });
  });

  it('reports lost when the connection drops, so the waiter falls back to the replaying log', async () => {
    const own = await startNats({ jetstream: true });
    const ownBus = await connectNatsBus({ url: own.url, name: 'run-end-watch-restart' });
    const s = await createJetStreamRunEventStream({ bus: ownBus });
    try {
      const watch = s.watchEnd('run-w4', AbortSignal.timeout(30_000));
      await watch.ready;
      await own.restart();
      expect(await watch.done).toEqual({ kind: 'lost' });
    } finally {
      await s.close();
      await ownBus.close();
      await own.stop();
    }
  });
});

describe('watchRunEnd', () => {
  it('unsubscribes once although both its end and its waiter close it', async () => {
    const nc = bus.connection;
    let unsubscribes = 0;
    const counting = new Proxy(nc, {
      get(target, key, receiver) {
        if (key !== 'subscribe') return Reflect.get(target, key, receiver) as unknown;
        return (...args: Parameters<typeof nc.subscribe>) => {
          const sub = target.subscribe(...args);
          const unsubscribe = sub.unsubscribe.bind(sub);
          sub.unsubscribe = (max?: number) => {
            unsubscribes++;
            unsubscribe(max);
          };
          return sub;
        };
      },
    });
    const watch = watchRunEnd(counting, connectionState(nc), 'watch.events.run-w5', AbortSignal.timeout(10_000));
    await watch.ready;
    await events.publish('run-w5', 't', 'end', null);
    expect(await watch.done).toEqual({ kind: 'end' });
    watch.close(); // as the waiter does when it is done (run-service/wait.ts)
    watch.close();
    expect(unsubscribes).toBe(1);
  });
});
