/**
 * Contract suites every Bus and RunEventStream implementation must pass.
 * Exported from `@agentloop/bus/testing`; call them inside a test file.
 */
import { randomUUID } from 'node:crypto';
import { AgentLoopError, TimeoutError, UnavailableError, newId } from '@agentloop/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RemoteError } from './errors.js';
import { Headers, type Bus, type BusMessage, type RunEventStream, type StoredRunEvent } from './types.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** A promise with its resolve function, to wait for something a handler does. */
function signal<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves once `n` messages were collected (or rejects after a generous safety timeout). */
function collector(n: number) {
  const got: BusMessage[] = [];
  const done = signal<BusMessage[]>();
  return {
    got,
    done: done.promise,
    handler: (m: BusMessage) => {
      got.push(m);
      if (got.length === n) done.resolve(got);
    },
  };
}

/**
 * `makeBus` returns a new connection to the same network each time it is
 * called (for NATS: a new client connection to one server). The suite closes
 * every bus it made after each test.
 */
export function busContract(name: string, makeBus: () => Promise<Bus>): void {
  describe(`Bus contract: ${name}`, () => {
    const made: Bus[] = [];
    const bus = async () => {
      const b = await makeBus();
      made.push(b);
      return b;
    };
    // Unique subjects per test so implementations sharing a server do not interfere.
    let p = '';
    afterEach(async () => {
      await Promise.allSettled(made.splice(0).map((b) => b.close()));
    });
    const subject = (s: string) => `contract.${p}.${s}`;
    const fresh = () => {
      p = randomUUID().replace(/-/g, '');
    };

    it('replies with the payload the handler returns', async () => {
      fresh();
      const server = await bus();
      const client = await bus();
      await server.serve(subject('echo'), { queue: 'contract-echo' }, async (m) => enc(`echo:${dec(m.data)}`));
      const reply = await client.request(subject('echo'), enc('hi'), { timeoutMs: 5_000 });
      expect(dec(reply.data)).toBe('echo:hi');
    });

    it('delivers each request to exactly one member of a queue group', async () => {
      fresh();
      const a = await bus();
      const b = await bus();
      const client = await bus();
      const seen = { a: [] as string[], b: [] as string[] };
      await a.serve(subject('work'), { queue: 'contract-work' }, async (m) => {
        seen.a.push(dec(m.data));
        return enc('a');
      });
      await b.serve(subject('work'), { queue: 'contract-work' }, async (m) => {
        seen.b.push(dec(m.data));
        return enc('b');
      });
      const ids = Array.from({ length: 20 }, (_, i) => `req-${i}`);
      const replies = await Promise.all(ids.map((id) => client.request(subject('work'), enc(id), { timeoutMs: 5_000 })));
      expect(replies).toHaveLength(20);
      const handled = [...seen.a, ...seen.b].sort();
      expect(handled).toEqual([...ids].sort());
    });

    it('throws TimeoutError when no reply arrives in time', async () => {
      fresh();
      const server = await bus();
      const client = await bus();
      const released = signal();
      await server.serve(subject('slow'), { queue: 'contract-slow' }, async (_m, ctx) => {
        await new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r(), { once: true }));
        released.resolve();
        return enc('too late');
      });
      const err = await client.request(subject('slow'), enc('x'), { timeoutMs: 200 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TimeoutError);
      expect((err as TimeoutError).code).toBe('TIMEOUT');
      await released.promise;
    });

    it('aborts the handler context signal when the deadline passes', async () => {
      fresh();
      const server = await bus();
      const client = await bus();
      const observed = signal<{ aborted: boolean; reason: unknown }>();
      await server.serve(subject('deadline'), { queue: 'contract-deadline' }, async (_m, ctx) => {
        await new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r(), { once: true }));
        observed.resolve({ aborted: ctx.signal.aborted, reason: ctx.signal.reason });
        return enc('late');
      });
      await expect(client.request(subject('deadline'), enc('x'), { timeoutMs: 150 })).rejects.toBeInstanceOf(TimeoutError);
      const o = await observed.promise;
      expect(o.aborted).toBe(true);
      expect(o.reason).toBeInstanceOf(TimeoutError);
    });

    it('throws UnavailableError "no service is serving <subject>" when nobody serves the subject', async () => {
      fresh();
      const client = await bus();
      const err = await client.request(subject('nobody'), enc('x'), { timeoutMs: 2_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnavailableError);
      expect((err as Error).message).toBe(`no service is serving ${subject('nobody')}`);
    });

    it('maps a handler error to a RemoteError carrying code, message and retryable', async () => {
      fresh();
      const server = await bus();
      const client = await bus();
      await server.serve(subject('fail'), { queue: 'contract-fail' }, async (m) => {
        const kind = dec(m.data);
        if (kind === 'not-found') throw new AgentLoopError('NOT_FOUND', 'File not found: uploads/x.txt');
        if (kind === 'unavailable') throw new UnavailableError('database is down');
        throw new Error('boom');
      });
      const notFound = await client.request(subject('fail'), enc('not-found'), { timeoutMs: 5_000 }).catch((e: unknown) => e);
      expect(notFound).toBeInstanceOf(RemoteError);
      expect(notFound).toMatchObject({ code: 'NOT_FOUND', message: 'File not found: uploads/x.txt', retryable: false });
      const unavailable = await client.request(subject('fail'), enc('unavailable'), { timeoutMs: 5_000 }).catch((e: unknown) => e);
      expect(unavailable).toBeInstanceOf(RemoteError);
      expect(unavailable).toMatchObject({ code: 'UNAVAILABLE', message: 'database is down', retryable: true });
      const plain = await client.request(subject('fail'), enc('plain'), { timeoutMs: 5_000 }).catch((e: unknown) => e);
      expect(plain).toMatchObject({ name: 'RemoteError', code: 'INTERNAL', message: 'boom', retryable: false });
    });

    it('passes traceparent, tenant, idempotency key and deadline headers to the handler', async () => {
      fresh();
      const server = await bus();
      const client = await bus();
      const got = signal<{ headers: Record<string, string>; deadline: number | undefined }>();
      await server.serve(subject('headers'), { queue: 'contract-headers' }, async (m, ctx) => {
        got.resolve({ headers: m.headers, deadline: ctx.deadline });
        return enc('ok');
      });
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const before = Date.now();
      await client.request(subject('headers'), enc('x'), {
        timeoutMs: 5_000,
        headers: { [Headers.traceparent]: traceparent, [Headers.tenant]: 'tenant-a', [Headers.idempotencyKey]: 'run-1:call-1' },
      });
      const after = Date.now();
      const { headers, deadline } = await got.promise;
      expect(headers[Headers.traceparent]).toBe(traceparent);
      expect(headers[Headers.tenant]).toBe('tenant-a');
      expect(headers[Headers.idempotencyKey]).toBe('run-1:call-1');
      expect(Number(headers[Headers.deadline])).toBe(deadline);
      expect(deadline).toBeGreaterThanOrEqual(before + 5_000);
      expect(deadline).toBeLessThanOrEqual(after + 5_000);
    });

    it('keeps an earlier deadline inherited from the caller headers', async () => {
      fresh();
      const server = await bus();
      const client = await bus();
      const got = signal<number | undefined>();
      await server.serve(subject('inherit'), { queue: 'contract-inherit' }, async (_m, ctx) => {
        got.resolve(ctx.deadline);
        return enc('ok');
      });
      const inherited = Date.now() + 3_000;
      await client.request(subject('inherit'), enc('x'), { timeoutMs: 60_000, headers: { [Headers.deadline]: String(inherited) } });
      expect(await got.promise).toBe(inherited);
    });

    it('delivers published events with data and headers to subscribers on other connections', async () => {
      fresh();
      const sub = await bus();
      const pub = await bus();
      const c = collector(1);
      await sub.subscribe(subject('evt'), c.handler);
      await pub.publish(subject('evt'), enc('payload'), { [Headers.tenant]: 't1' });
      const [m] = await c.done;
      expect(m?.subject).toBe(subject('evt'));
      expect(dec(m?.data ?? new Uint8Array())).toBe('payload');
      expect(m?.headers[Headers.tenant]).toBe('t1');
    });

    it('supports `*` (one token) and `>` (one or more tokens) in subscriptions', async () => {
      fresh();
      const sub = await bus();
      const pub = await bus();
      const star = collector(2);
      const gt = collector(3);
      await sub.subscribe(subject('w.*'), star.handler);
      await sub.subscribe(subject('w.>'), gt.handler);
      await pub.publish(subject('w.a'), enc('1'));
      await pub.publish(subject('w.a.b'), enc('2'));
      await pub.publish(subject('w.z'), enc('3'));
      // Messages from one publisher arrive in order, so when `*` has seen w.z it would have seen w.a.b.
      expect((await star.done).map((m) => m.subject)).toEqual([subject('w.a'), subject('w.z')]);
      expect((await gt.done).map((m) => m.subject)).toEqual([subject('w.a'), subject('w.a.b'), subject('w.z')]);
    });

    it('stops serving after unsubscribe', async () => {
      fresh();
      const server = await bus();
      const client = await bus();
      const sub = await server.serve(subject('gone'), { queue: 'contract-gone' }, async () => enc('ok'));
      await client.request(subject('gone'), enc('x'), { timeoutMs: 5_000 });
      await sub.unsubscribe();
      await expect(client.request(subject('gone'), enc('x'), { timeoutMs: 2_000 })).rejects.toBeInstanceOf(UnavailableError);
    });

    it('keeps serving the other subjects of a queue group when one is unsubscribed', async () => {
      fresh();
      const server = await bus();
      const client = await bus();
      const one = await server.serve(subject('one'), { queue: 'contract-pair' }, async () => enc('one'));
      await server.serve(subject('two'), { queue: 'contract-pair' }, async () => enc('two'));
      await one.unsubscribe();
      expect(dec((await client.request(subject('two'), enc('x'), { timeoutMs: 5_000 })).data)).toBe('two');
    });

    it('waits for in-flight handlers before close() resolves', async () => {
      fresh();
      const server = await bus();
      const client = await bus();
      const started = signal();
      const gate = signal();
      const order: string[] = [];
      await server.serve(subject('inflight'), { queue: 'contract-inflight' }, async () => {
        started.resolve();
        await gate.promise;
        order.push('handler done');
        return enc('finished');
      });
      const reply = client.request(subject('inflight'), enc('x'), { timeoutMs: 10_000 });
      await started.promise;
      const closing = server.close().then(() => order.push('closed'));
      gate.resolve();
      expect(dec((await reply).data)).toBe('finished');
      await closing;
      expect(order).toEqual(['handler done', 'closed']);
    });

    it('copies payloads so neither side shares memory with the other', async () => {
      fresh();
      const server = await bus();
      const client = await bus();
      await server.serve(subject('copy'), { queue: 'contract-copy' }, async (m) => {
        const d = m.data;
        d[0] = 0x5a; // 'Z'
        return d;
      });
      const sent = enc('abc');
      const reply = await client.request(subject('copy'), sent, { timeoutMs: 5_000 });
      expect(dec(sent)).toBe('abc');
      expect(dec(reply.data)).toBe('Zbc');
    });
  });
}

async function collect(iter: AsyncIterable<StoredRunEvent>, until?: (e: StoredRunEvent, all: StoredRunEvent[]) => boolean): Promise<StoredRunEvent[]> {
  const out: StoredRunEvent[] = [];
  for await (const e of iter) {
    out.push(e);
    if (until?.(e, out)) break;
  }
  return out;
}

/**
 * `makeStream` is called once for the suite; every test uses fresh run ids.
 * Iterations carry an AbortSignal.timeout safety net so a broken
 * implementation fails instead of hanging.
 */
export function runEventStreamContract(name: string, makeStream: () => Promise<RunEventStream>): void {
  describe(`RunEventStream contract: ${name}`, () => {
    let stream: RunEventStream;
    beforeAll(async () => {
      stream = await makeStream();
    });
    afterAll(async () => {
      await stream.close();
    });
    const safety = () => AbortSignal.timeout(20_000);

    it('assigns increasing ids and stores event name, run id, JSON data and timestamp', async () => {
      const run = newId();
      const before = Date.now();
      const id1 = await stream.publish(run, 'thread-1', 'metadata', { run_id: run });
      const id2 = await stream.publish(run, 'thread-1', 'values', { messages: [{ type: 'ai', content: 'hé' }] });
      const id3 = await stream.publish(run, 'thread-1', 'end', null);
      expect(id2).toBeGreaterThan(id1);
      expect(id3).toBeGreaterThan(id2);
      const events = await collect(stream.subscribe(run, { signal: safety() }));
      expect(events.map((e) => e.id)).toEqual([id1, id2, id3]);
      expect(events.map((e) => e.event)).toEqual(['metadata', 'values', 'end']);
      expect(events.every((e) => e.runId === run)).toBe(true);
      expect(JSON.parse(events[1]?.dataJson ?? '')).toEqual({ messages: [{ type: 'ai', content: 'hé' }] });
      expect(events[2]?.dataJson).toBe('null');
      expect(events[0]?.tsMs).toBeGreaterThanOrEqual(before);
    });

    it('replays only the events after afterId', async () => {
      const run = newId();
      const a = await stream.publish(run, 't', 'values', { n: 1 });
      const b = await stream.publish(run, 't', 'values', { n: 2 });
      const c = await stream.publish(run, 't', 'end', null);
      const events = await collect(stream.subscribe(run, { afterId: a, signal: safety() }));
      expect(events.map((e) => e.id)).toEqual([b, c]);
    });

    it('stores events published without awaiting each in publication order, and resumes after any of them', async () => {
      const run = newId();
      // The orchestrator's stream loop publishes a step's events this way (services/orchestrator run/publish-pipeline.ts).
      const ids = await Promise.all(
        [1, 2, 3, 4].map((n) => stream.publish(run, 't', n % 2 ? 'updates' : 'values', { n })).concat(stream.publish(run, 't', 'end', null)),
      );
      for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]!);
      const all = await collect(stream.subscribe(run, { signal: safety() }));
      expect(all.map((e) => [e.id, e.event, e.dataJson])).toEqual([
        [ids[0], 'updates', '{"n":1}'],
        [ids[1], 'values', '{"n":2}'],
        [ids[2], 'updates', '{"n":3}'],
        [ids[3], 'values', '{"n":4}'],
        [ids[4], 'end', 'null'],
      ]);
      for (let k = 0; k < ids.length - 1; k++) {
        const rest = await collect(stream.subscribe(run, { afterId: ids[k], signal: safety() }));
        expect(rest.map((e) => e.id)).toEqual(ids.slice(k + 1));
      }
    });

    it('tails live events published after the subscription started', async () => {
      const run = newId();
      const iter = stream.subscribe(run, { signal: safety() })[Symbol.asyncIterator]();
      const first = iter.next();
      const id1 = await stream.publish(run, 't', 'values', { n: 1 });
      expect((await first).value).toMatchObject({ id: id1, event: 'values' });
      const second = iter.next();
      const id2 = await stream.publish(run, 't', 'end', null);
      expect((await second).value).toMatchObject({ id: id2, event: 'end' });
      expect((await iter.next()).done).toBe(true);
    });

    it('ends the iteration after the end event, ignoring later events', async () => {
      const run = newId();
      await stream.publish(run, 't', 'values', { n: 1 });
      await stream.publish(run, 't', 'end', null);
      await stream.publish(run, 't', 'values', { n: 'after end' });
      const events = await collect(stream.subscribe(run, { signal: safety() }));
      expect(events.map((e) => e.event)).toEqual(['values', 'end']);
    });

    it('ends the iteration when the signal aborts', async () => {
      const run = newId();
      await stream.publish(run, 't', 'values', { n: 1 });
      const ac = new AbortController();
      const safetyTimer = setTimeout(() => ac.abort(new Error('safety timeout')), 20_000);
      const events: StoredRunEvent[] = [];
      for await (const e of stream.subscribe(run, { signal: ac.signal })) {
        events.push(e);
        ac.abort();
      }
      clearTimeout(safetyTimer);
      expect(events.map((e) => e.event)).toEqual(['values']);
    });

    it('does not deliver the events of other runs', async () => {
      const run = newId();
      const other = newId();
      await stream.publish(other, 't', 'values', { who: 'other' });
      await stream.publish(run, 't', 'values', { who: 'mine' });
      await stream.publish(other, 't', 'end', null);
      await stream.publish(run, 't', 'end', null);
      const events = await collect(stream.subscribe(run, { signal: safety() }));
      expect(events.every((e) => e.runId === run)).toBe(true);
      expect(events.map((e) => JSON.parse(e.dataJson) as unknown)).toEqual([{ who: 'mine' }, null]);
    });

    it('purge removes the events of one run only', async () => {
      const run = newId();
      const kept = newId();
      await stream.publish(run, 't', 'values', { n: 1 });
      await stream.publish(kept, 't', 'values', { n: 1 });
      await stream.publish(kept, 't', 'end', null);
      await stream.purge(run);
      const endId = await stream.publish(run, 't', 'end', null);
      expect((await collect(stream.subscribe(run, { signal: safety() }))).map((e) => e.id)).toEqual([endId]);
      expect((await collect(stream.subscribe(kept, { signal: safety() }))).map((e) => e.event)).toEqual(['values', 'end']);
    });
  });
}
