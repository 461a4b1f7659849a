import { startNats, type DevServer } from '@agentloop/devservers';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNatsBus, type NatsBus } from './nats-bus.js';
import { busContract } from './testing/index.js';
import { Headers } from './types.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

let server: DevServer;
beforeAll(async () => {
  server = await startNats({ jetstream: false });
});
afterAll(async () => {
  await server?.stop();
});

busContract('NatsBus', () => connectNatsBus({ url: server.url, name: 'contract' }));

describe('NatsBus', () => {
  it('registers served subjects as a NATS micro-service visible in $SRV.INFO', async () => {
    const bus = await connectNatsBus({ url: server.url, name: 'srv-info' });
    await bus.serve('agentloop.srvtest.echo', { queue: 'srvtest', version: '1.2.3', description: 'echo for tests' }, async (m) => m.data);
    const nc = await connect({ servers: server.url });
    try {
      const reply = await nc.request('$SRV.INFO.srvtest', undefined, { timeout: 2_000 });
      const info = JSON.parse(dec(reply.data)) as {
        name: string;
        version: string;
        description: string;
        endpoints: { subject: string; queue_group?: string }[];
      };
      expect(info).toMatchObject({ name: 'srvtest', version: '1.2.3', description: 'echo for tests' });
      expect(info.endpoints).toEqual([expect.objectContaining({ subject: 'agentloop.srvtest.echo', queue_group: 'srvtest' })]);
      const ping = await nc.request('$SRV.PING.srvtest', undefined, { timeout: 2_000 });
      expect(JSON.parse(dec(ping.data))).toMatchObject({ name: 'srvtest' });
    } finally {
      await nc.close();
      await bus.close();
    }
  });

  it('rejoins a restarted nats-server and serves again', async () => {
    const own = await startNats({ jetstream: false });
    const serverBus = await connectNatsBus({ url: own.url, name: 'restart-server' });
    const client = await connectNatsBus({ url: own.url, name: 'restart-client' });
    try {
      await serverBus.serve('agentloop.restart.echo', { queue: 'restart' }, async (m) => m.data);
      expect(dec((await client.request('agentloop.restart.echo', enc('before'), { timeoutMs: 2_000 })).data)).toBe('before');
      const rejoined = Promise.all([reconnected(serverBus), reconnected(client)]);
      await own.restart();
      await rejoined;
      // The server-side subscription is re-sent on reconnect; flushing it makes the order deterministic.
      await serverBus.connection.flush();
      expect(dec((await client.request('agentloop.restart.echo', enc('after'), { timeoutMs: 2_000 })).data)).toBe('after');
    } finally {
      await Promise.allSettled([serverBus.close(), client.close()]);
      await own.stop();
    }
  });

  it('answers a keyed request made while nats-server restarts, once the server and the responder are back', async () => {
    const own = await startNats({ jetstream: false });
    const serverBus = await connectNatsBus({ url: own.url, name: 'restart-keyed-server' });
    const client = await connectNatsBus({ url: own.url, name: 'restart-keyed-client' });
    try {
      let calls = 0;
      await serverBus.serve('agentloop.restart.keyed', { queue: 'restart-keyed' }, async (m) => {
        calls++;
        return m.data;
      });
      const down = (async () => {
        for await (const s of client.connection.status()) if (s.type === 'disconnect') return;
      })();
      const restarted = own.restart();
      await down;
      // Sent while the connection is down: nats.js would drop it on reconnect; the bus waits and sends it then.
      const reply = client.request('agentloop.restart.keyed', enc('during'), { timeoutMs: 15_000, headers: { [Headers.idempotencyKey]: 'k1' } });
      await restarted;
      expect(dec((await reply).data)).toBe('during');
      expect(calls).toBe(1);
    } finally {
      await Promise.allSettled([serverBus.close(), client.close()]);
      await own.stop();
    }
  });

  it('sends a keyed request again when the connection drops before its reply, and answers with the second reply', async () => {
    const own = await startNats({ jetstream: false });
    const serverBus = await connectNatsBus({ url: own.url, name: 'resend-server' });
    const client = await connectNatsBus({ url: own.url, name: 'resend-client' });
    try {
      let calls = 0;
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await serverBus.serve('agentloop.restart.resend', { queue: 'restart-resend' }, async (m) => {
        calls++;
        if (calls === 1) await gate; // the first reply is written while the connection is down: lost
        return enc(`${dec(m.data)}#${calls}`);
      });
      const reply = client.request('agentloop.restart.resend', enc('call'), { timeoutMs: 15_000, headers: { [Headers.idempotencyKey]: 'k2' } });
      while (calls === 0) await new Promise((r) => setTimeout(r, 10));
      const down = (async () => {
        for await (const s of serverBus.connection.status()) if (s.type === 'disconnect') return;
      })();
      const restarted = own.restart();
      await down;
      release();
      await restarted;
      expect(dec((await reply).data)).toBe('call#2');
      expect(calls).toBe(2);
    } finally {
      await Promise.allSettled([serverBus.close(), client.close()]);
      await own.stop();
    }
  });

  it('fails to connect with an UnavailableError naming the URL', async () => {
    await expect(connectNatsBus({ url: 'nats://127.0.0.1:1', name: 'nope' })).rejects.toThrow(/Cannot connect to NATS at nats:\/\/127\.0\.0\.1:1/);
  });
});

/** Resolves when the bus's connection reports a reconnect. */
async function reconnected(bus: NatsBus): Promise<void> {
  for await (const s of bus.connection.status()) if (s.type === 'reconnect') return;
}
