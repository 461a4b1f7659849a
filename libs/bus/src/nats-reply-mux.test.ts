import { startNats, type DevServer } from '@agentloop/devservers';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsReplyMux } from './nats-reply-mux.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

let server: DevServer;
let responder: NatsConnection;
beforeAll(async () => {
  server = await startNats({ jetstream: false });
  responder = await connect({ servers: server.url });
  responder.subscribe('mux.echo', {
    callback: (_err, msg) => {
      msg.respond(enc(`re:${dec(msg.data)}:${msg.headers?.get('x-h') ?? ''}`));
    },
  });
  responder.subscribe('mux.silent', { callback: () => undefined });
  await responder.flush();
});
afterAll(async () => {
  await responder?.close();
  await server?.stop();
});

describe('NatsReplyMux', () => {
  it('routes each reply to its own request over one subscription', async () => {
    const nc = await connect({ servers: server.url });
    try {
      const mux = new NatsReplyMux(nc);
      const ids = Array.from({ length: 50 }, (_, i) => String(i));
      const replies = await Promise.all(ids.map((id) => mux.request('mux.echo', enc(id), { timeoutMs: 5_000 })));
      expect(replies.map((r) => dec(r.data))).toEqual(ids.map((id) => `re:${id}:`));
      const h = headers();
      h.set('x-h', 'v');
      expect(dec((await mux.request('mux.echo', enc('h'), { timeoutMs: 5_000, headers: h })).data)).toBe('re:h:v');
    } finally {
      await nc.close();
    }
  });

  it('fails with nats.js’s errors: no responders, and a timeout', async () => {
    const nc = await connect({ servers: server.url });
    try {
      const mux = new NatsReplyMux(nc);
      const nobody = (await mux.request('mux.nobody', enc('x'), { timeoutMs: 5_000 }).catch((e: unknown) => e)) as Error & { isNoResponders?: () => boolean };
      expect(nobody.name).toBe('RequestError');
      expect(nobody.isNoResponders?.()).toBe(true);
      const silent = (await mux.request('mux.silent', enc('x'), { timeoutMs: 100 }).catch((e: unknown) => e)) as Error;
      expect(silent.name).toBe('TimeoutError');
      // A late reply to a request that timed out is dropped; the next request is still answered.
      expect(dec((await mux.request('mux.echo', enc('after'), { timeoutMs: 5_000 })).data)).toBe('re:after:');
    } finally {
      await nc.close();
    }
  });

  it('rejects what is waiting when the connection closes, and requests made after', async () => {
    const nc = await connect({ servers: server.url });
    const mux = new NatsReplyMux(nc);
    const waiting = mux.request('mux.silent', enc('x'), { timeoutMs: 60_000 }).catch((e: unknown) => e);
    await nc.flush();
    await nc.close();
    expect(((await waiting) as Error).name).toBe('ClosedConnectionError');
    expect(((await mux.request('mux.echo', enc('x'), { timeoutMs: 5_000 }).catch((e: unknown) => e)) as Error).name).toBe('ClosedConnectionError');
  });
});
