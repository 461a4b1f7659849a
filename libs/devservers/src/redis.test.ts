import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from './redis.js';
import type { DevServer } from './types.js';

describe('startRedis (binary)', () => {
  let server: DevServer;
  beforeAll(async () => {
    server = await startRedis({ mode: 'binary' });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers PING at the returned url', async () => {
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    const r = new Redis(server.url, { lazyConnect: true });
    await r.connect();
    try {
      expect(await r.ping()).toBe('PONG');
    } finally {
      r.disconnect();
    }
  });

  it('keeps the port and the data across restart()', async () => {
    const r = new Redis(server.url, { lazyConnect: true });
    await r.connect();
    await r.set('devservers:kept', 'yes');
    r.disconnect();

    await server.restart();

    const r2 = new Redis(server.url, { lazyConnect: true });
    await r2.connect();
    try {
      expect(await r2.get('devservers:kept')).toBe('yes');
    } finally {
      r2.disconnect();
    }
  });
});
