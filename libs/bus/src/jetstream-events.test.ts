import { startNats, type DevServer } from '@agentloop/devservers';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJetStreamRunEventStream } from './jetstream-events.js';
import { connectNatsBus } from './nats-bus.js';
import { runEventStreamContract } from './testing/index.js';

let server: DevServer;
let nc: NatsConnection;
beforeAll(async () => {
  server = await startNats({ jetstream: true });
  nc = await connect({ servers: server.url });
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

async function poll(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

runEventStreamContract('JetStreamRunEventStream', () => createJetStreamRunEventStream({ nc }));

describe('JetStreamRunEventStream', () => {
  it('creates the RUN_EVENTS stream on agentloop.events.> with file storage and a 24 h max age', async () => {
    const s = await createJetStreamRunEventStream({ nc });
    const info = await (await jetstreamManager(nc)).streams.info('RUN_EVENTS');
    expect(info.config.subjects).toEqual(['agentloop.events.>']);
    expect(info.config.storage).toBe('file');
    expect(info.config.max_age).toBe(nanos(24 * 60 * 60 * 1000));
    await s.close();
  });

  it('updates the max age of an existing stream instead of failing', async () => {
    const a = await createJetStreamRunEventStream({ nc, streamName: 'RUN_EVENTS_UPD', subjectPrefix: 'upd.events', maxAgeMs: 60 * 60 * 1000 });
    const b = await createJetStreamRunEventStream({ nc, streamName: 'RUN_EVENTS_UPD', subjectPrefix: 'upd.events', maxAgeMs: 2 * 60 * 60 * 1000 });
    const info = await (await jetstreamManager(nc)).streams.info('RUN_EVENTS_UPD');
    expect(info.config.max_age).toBe(nanos(2 * 60 * 60 * 1000));
    await Promise.all([a.close(), b.close()]);
  });

  it('keeps a live subscription going across a nats-server restart and publishes through it', async () => {
    const own = await startNats({ jetstream: true });
    const bus = await connectNatsBus({ url: own.url, name: 'events-live-restart' });
    const s = await createJetStreamRunEventStream({ bus });
    try {
      const first = await s.publish('run-live', 't', 'values', { n: 1 });
      const seen: string[] = [];
      const reader = (async () => {
        for await (const e of s.subscribe('run-live', { signal: AbortSignal.timeout(30_000) })) seen.push(`${e.event}:${e.id}`);
      })();
      await poll(() => seen.length === 1);
      const restarted = own.restart();
      // Published while the server is down or still starting: retried until JetStream acks it.
      const second = s.publish('run-live', 't', 'values', { n: 2 });
      await restarted;
      const end = await s.publish('run-live', 't', 'end', null);
      await reader;
      expect(seen).toEqual([`values:${first}`, `values:${await second}`, `end:${end}`]);
    } finally {
      await s.close();
      await bus.close();
      await own.stop();
    }
  });

  it('shares the connection of a NatsBus and keeps events across a nats-server restart', async () => {
    const own = await startNats({ jetstream: true });
    const bus = await connectNatsBus({ url: own.url, name: 'events-restart' });
    const s = await createJetStreamRunEventStream({ bus });
    try {
      const first = await s.publish('run-restart', 't', 'values', { n: 1 });
      const reconnected = (async () => {
        for await (const st of bus.connection.status()) if (st.type === 'reconnect') return;
      })();
      await own.restart();
      await reconnected;
      const end = await s.publish('run-restart', 't', 'end', null);
      const ids: number[] = [];
      for await (const e of s.subscribe('run-restart', { signal: AbortSignal.timeout(20_000) })) ids.push(e.id);
      expect(ids).toEqual([first, end]);
    } finally {
      await s.close();
      await bus.close();
      await own.stop();
    }
  });
});
