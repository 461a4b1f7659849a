import { describe, expect, it } from 'vitest';
import { MemoryBus } from './memory-bus.js';
import { busContract } from './testing/index.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

// Every bus of the suite is a peer on one in-process network (like connections to one server).
const root = new MemoryBus();
busContract('MemoryBus', async () => root.peer());

describe('MemoryBus', () => {
  it('hands requests to the members of a queue group in turn', async () => {
    const bus = new MemoryBus();
    const got: string[] = [];
    await bus.serve('rr.work', { queue: 'rr' }, async () => {
      got.push('a');
      return enc('a');
    });
    await bus.serve('rr.work', { queue: 'rr' }, async () => {
      got.push('b');
      return enc('b');
    });
    for (let i = 0; i < 4; i++) await bus.request('rr.work', enc('x'), { timeoutMs: 1_000 });
    expect(got).toEqual(['a', 'b', 'a', 'b']);
    await bus.close();
  });

  it('serves peers on the same network but not separate buses', async () => {
    const a = new MemoryBus();
    const peer = a.peer();
    const stranger = new MemoryBus();
    await a.serve('peer.echo', { queue: 'peer' }, async (m) => m.data);
    expect(dec((await peer.request('peer.echo', enc('hi'), { timeoutMs: 1_000 })).data)).toBe('hi');
    await expect(stranger.request('peer.echo', enc('hi'), { timeoutMs: 1_000 })).rejects.toThrow('no service is serving peer.echo');
    await Promise.all([a.close(), peer.close(), stranger.close()]);
  });

  it('sees servers that come and go after a subject was requested (its servers are remembered per subject)', async () => {
    const bus = new MemoryBus();
    const peer = bus.peer();
    const a = await bus.serve('cache.work', { queue: 'cache' }, async () => enc('a'));
    expect(dec((await bus.request('cache.work', enc('x'), { timeoutMs: 1_000 })).data)).toBe('a');
    await a.unsubscribe();
    await expect(bus.request('cache.work', enc('x'), { timeoutMs: 1_000 })).rejects.toThrow('no service is serving cache.work');
    await peer.serve('cache.*', { queue: 'cache' }, async () => enc('b'));
    expect(dec((await bus.request('cache.work', enc('x'), { timeoutMs: 1_000 })).data)).toBe('b');
    await peer.close();
    await expect(bus.request('cache.work', enc('x'), { timeoutMs: 1_000 })).rejects.toThrow('no service is serving cache.work');
    await bus.close();
  });

  it('rejects a subject with an empty token', async () => {
    const bus = new MemoryBus();
    await expect(bus.publish('a..b', enc('x'))).rejects.toThrow(/Invalid subject "a\.\.b"/);
    await bus.close();
  });
});
