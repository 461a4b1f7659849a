import { MessageChannel } from 'node:worker_threads';
import { UnavailableError } from '@agentloop/core';
import { describe, expect, it, vi } from 'vitest';
import { MemoryBus } from './memory-bus.js';
import { MemoryRunEventStream } from './memory-events.js';
import { bridgeBus, bridgeRunEvents } from './port-bridge.js';
import { PortBus } from './port-bus.js';
import { PortRunEventStream } from './port-events.js';
import { ThreadBus } from './thread-bus.js';
import { busContract, runEventStreamContract } from './testing/index.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** A PortBus whose other end is bridged into `hub`'s network, as the orchestrator thread's is. */
function portBusOn(hub: MemoryBus, opts: { noEcho?: boolean } = {}): PortBus {
  const { port1, port2 } = new MessageChannel();
  bridgeBus(port1, hub, opts);
  return new PortBus(port2);
}

// Connections alternate between PortBus and plain MemoryBus peers on one network, so the suite's
// requests and events cross the port in both directions (and port to port).
const root = new MemoryBus();
let made = 0;
busContract('PortBus', async () => (made++ % 2 === 0 ? portBusOn(root) : root.peer()));

// A worker thread's bus: its own servers first, the rest over the port.
busContract('ThreadBus', async () => new ThreadBus(new MemoryBus(), portBusOn(root, { noEcho: true })));

runEventStreamContract('PortRunEventStream', async () => {
  const { port1, port2 } = new MessageChannel();
  bridgeRunEvents(port1, new MemoryRunEventStream());
  return new PortRunEventStream(port2);
});

describe('ThreadBus', () => {
  it('answers its own thread from the local server without the port, and the other thread over it', async () => {
    const hub = new MemoryBus();
    await hub.serve('main.op', { queue: 'main' }, async () => enc('main'));
    const { port1, port2 } = new MessageChannel();
    bridgeBus(port1, hub);
    const bus = new ThreadBus(new MemoryBus(), new PortBus(port2));
    await bus.serve('tools.op', { queue: 'tools' }, async (m) => enc(`tools ${dec(m.data)}`));
    expect(dec((await hub.request('tools.op', enc('from main'), { timeoutMs: 5_000 })).data)).toBe('tools from main');
    expect(dec((await bus.request('main.op', enc('x'), { timeoutMs: 5_000 })).data)).toBe('main');
    // With the port gone, this thread's own services still answer it; the main thread's do not.
    port1.close();
    await expect(bus.request('main.op', enc('x'), { timeoutMs: 5_000 })).rejects.toBeInstanceOf(UnavailableError);
    expect(dec((await bus.request('tools.op', enc('local'), { timeoutMs: 5_000 })).data)).toBe('tools local');
    await bus.close();
    await hub.close();
  });

  it("delivers an event of its own thread to that thread's subscribers before a reply sent after it, and to the other threads once", async () => {
    const hub = new MemoryBus();
    const bus = new ThreadBus(new MemoryBus(), portBusOn(hub, { noEcho: true }));
    const other = new ThreadBus(new MemoryBus(), portBusOn(hub, { noEcho: true }));
    const seen = { here: [] as string[], main: [] as string[], other: [] as string[] };
    await bus.subscribe('progress.*', (m) => void seen.here.push(dec(m.data)));
    await hub.subscribe('progress.*', (m) => void seen.main.push(dec(m.data)));
    await other.subscribe('progress.*', (m) => void seen.other.push(dec(m.data)));
    // As the MCP broker does: the last progress notification, then the call's answer.
    await bus.serve('call.op', { queue: 'call' }, async () => {
      await bus.publish('progress.a', enc('3 of 3'));
      return enc('result');
    });
    await bus.request('call.op', enc('x'), { timeoutMs: 5_000 });
    expect(seen.here).toEqual(['3 of 3']);
    await hub.publish('progress.b', enc('from main'));
    await other.publish('progress.c', enc('from the other thread'));
    // Across threads, events from different publishers have no order among them.
    const all = ['3 of 3', 'from main', 'from the other thread'];
    await vi.waitFor(() => expect([...seen.main].sort()).toEqual(all));
    await vi.waitFor(() => expect([...seen.other].sort()).toEqual(all));
    await vi.waitFor(() => expect([...seen.here].sort()).toEqual(all));
    // Once each, its own included: nothing comes back round the main thread.
    await new Promise((r) => setTimeout(r, 50));
    expect([...seen.here].sort()).toEqual(all);
    expect([...seen.other].sort()).toEqual(all);
    await bus.close();
    await other.close();
    await hub.close();
  });
});

describe('PortBus', () => {
  it('fails pending requests with UnavailableError when the other thread closes the port', async () => {
    const hub = new MemoryBus();
    await hub.serve('slow.op', { queue: 'slow' }, () => new Promise<Uint8Array>(() => undefined));
    const { port1, port2 } = new MessageChannel();
    bridgeBus(port1, hub);
    const bus = new PortBus(port2);
    const pending = bus.request('slow.op', enc('x'), { timeoutMs: 60_000 });
    port1.close();
    await expect(pending).rejects.toBeInstanceOf(UnavailableError);
    await hub.close();
  });

  it('stops serving the port side on the hub once its port closes', async () => {
    const hub = new MemoryBus();
    const { port1, port2 } = new MessageChannel();
    bridgeBus(port1, hub);
    const bus = new PortBus(port2);
    await bus.serve('echo.op', { queue: 'echo' }, async (m) => enc(`echo ${dec(m.data)}`));
    expect(dec((await hub.request('echo.op', enc('a'), { timeoutMs: 5_000 })).data)).toBe('echo a');
    port2.close();
    const deadline = Date.now() + 5_000;
    let error: unknown;
    // A request already on its way when the port closed fails as a retryable UNAVAILABLE RemoteError; then nobody serves.
    while (!(error instanceof UnavailableError) && Date.now() < deadline) {
      error = await hub.request('echo.op', enc('b'), { timeoutMs: 5_000 }).then(
        () => undefined,
        (err: unknown) => err,
      );
      if (!(error instanceof UnavailableError)) await new Promise((r) => setTimeout(r, 10));
    }
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toContain('no service is serving echo.op');
    await hub.close();
  });
});

describe('PortRunEventStream', () => {
  it('sends the events published in one turn of the event loop as one port message, each resolving with its own id', async () => {
    const { port1, port2 } = new MessageChannel();
    const log = new MemoryRunEventStream();
    bridgeRunEvents(port1, log);
    const calls: string[] = [];
    port1.on('message', (m: { t: string }) => calls.push(m.t));
    const stream = new PortRunEventStream(port2);
    const run = 'run-batched';
    const ids = await Promise.all(['a', 'b', 'c'].map((event) => stream.publish(run, 'thread-1', event, { event })));
    expect(calls).toEqual(['events.publish']);
    expect(ids).toEqual([ids[0], ids[0]! + 1, ids[0]! + 2]);
    // The next turn's event is a message of its own, after them in the log.
    await stream.publish(run, 'thread-1', 'd', null);
    expect(calls).toEqual(['events.publish', 'events.publish']);
    const seen: string[] = [];
    for await (const e of log.subscribe(run)) {
      seen.push(e.event);
      if (e.event === 'd') break;
    }
    expect(seen).toEqual(['a', 'b', 'c', 'd']);
    port2.close();
  });

  it('stores what was published in the same turn before a purge, so the purge removes it', async () => {
    const { port1, port2 } = new MessageChannel();
    const log = new MemoryRunEventStream();
    bridgeRunEvents(port1, log);
    const stream = new PortRunEventStream(port2);
    const published = stream.publish('run-purged', 'thread-1', 'values', { n: 1 });
    await stream.purge('run-purged');
    await published;
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const seen: string[] = [];
    for await (const e of log.subscribe('run-purged', { signal: ac.signal })) seen.push(e.event);
    expect(seen).toEqual([]);
    port2.close();
  });
});
