import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNats } from './nats.js';
import { freePort, probeTcp } from './ports.js';
import type { DevServer } from './types.js';

describe('startNats (binary)', () => {
  let server: DevServer;
  beforeAll(async () => {
    server = await startNats({ jetstream: true, mode: 'binary' });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('serves NATS at the returned url', async () => {
    expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
    const nc = await connect({ servers: server.url });
    try {
      expect(nc.info?.jetstream).toBe(true);
    } finally {
      await nc.close();
    }
  });

  it('keeps the port and the JetStream data across restart()', async () => {
    const nc = await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'DEVSERVERS_T', subjects: ['devservers.t'] });
    await jetstream(nc).publish('devservers.t', new TextEncoder().encode('kept'));
    await nc.close();

    await server.restart();

    const nc2 = await connect({ servers: server.url });
    try {
      const jsm2 = await jetstreamManager(nc2);
      const info = await jsm2.streams.info('DEVSERVERS_T');
      expect(info.state.messages).toBe(1);
    } finally {
      await nc2.close();
    }
  });
});

describe('startNats options', () => {
  it('listens on the requested port', async () => {
    const port = await freePort();
    const s = await startNats({ mode: 'binary', jetstream: false, port });
    try {
      expect(s.port).toBe(port);
      expect(await probeTcp('127.0.0.1', port, (b) => b.startsWith('INFO '))).toBe(true);
    } finally {
      await s.stop();
    }
  });
});

describe('startNats stop()', () => {
  it('stops the server so its port no longer accepts connections', async () => {
    const s = await startNats({ mode: 'binary' });
    await s.stop();
    await expect(probeTcp('127.0.0.1', s.port, () => true)).rejects.toThrow();
  });
});
