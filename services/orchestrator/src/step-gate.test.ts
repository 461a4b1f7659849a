import { describe, expect, it } from 'vitest';
import { ReleaseJobError } from '@agentloop/queue';
import { StepGate, TenantTurns } from './step-gate.js';

/** Settles pending promise callbacks. */
const flush = () => new Promise<void>((r) => setImmediate(r));

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('StepGate', () => {
  it('lets `slots` runs compute at once and queues the rest in order', async () => {
    const gate = new StepGate(2);
    const order: string[] = [];
    const a = await gate.enter('t');
    const b = await gate.enter('t');
    const c = gate.enter('t').then((l) => (order.push('c'), l));
    const d = gate.enter('t').then((l) => (order.push('d'), l));
    await flush();
    expect(order).toEqual([]);
    expect([gate.busy, gate.waiting]).toEqual([2, 2]);
    a.release();
    await flush();
    expect(order).toEqual(['c']);
    b.release();
    await flush();
    expect(order).toEqual(['c', 'd']);
    (await c).release();
    (await d).release();
    expect([gate.busy, gate.waiting]).toEqual([0, 0]);
  });

  it('a run waiting on its model holds no slot, and comes back ahead of runs not started', async () => {
    const gate = new StepGate(1);
    const first = await gate.enter('t');
    const model = deferred<string>();
    const answer = first.idle(() => model.promise);
    await flush();
    // The slot is free while the model call is out: another run starts.
    const second = await gate.enter('t');
    expect(gate.busy).toBe(1);
    const third = gate.enter('t');
    model.resolve('hello');
    await flush();
    // The model answered; the first run waits for the slot, ahead of the third (not started).
    second.release();
    expect(await answer).toBe('hello');
    expect(gate.waiting).toBe(1);
    first.release();
    (await third).release();
    expect([gate.busy, gate.waiting]).toEqual([0, 0]);
  });

  it('gives the slot back once for nested idle calls, and `idle` rethrows the wait error', async () => {
    const gate = new StepGate(1);
    const lease = await gate.enter('t');
    await lease.idle(async () => {
      expect(gate.busy).toBe(0);
      await lease.idle(async () => expect(gate.busy).toBe(0));
      expect(gate.busy).toBe(0);
    });
    expect(gate.busy).toBe(1);
    await expect(lease.idle(() => Promise.reject(new Error('model down')))).rejects.toThrow('model down');
    expect(gate.busy).toBe(1);
    lease.release();
    lease.release();
    expect(gate.busy).toBe(0);
  });

  it('tenants take turns: one tenant’s burst does not hold another tenant’s run behind all of it', async () => {
    const gate = new StepGate(1);
    const holder = await gate.enter('a');
    const started: string[] = [];
    const leases = new Map<string, { release(): void }>();
    const enter = (tenant: string, name: string) => void gate.enter(tenant).then((l) => (started.push(name), leases.set(name, l)));
    for (let i = 0; i < 4; i++) enter('a', `a${i}`);
    enter('b', 'b0');
    enter('b', 'b1');
    holder.release();
    for (let i = 0; i < 6; i++) {
      await flush();
      leases.get(started[started.length - 1] as string)?.release();
    }
    expect(started).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'a3']);
    expect(gate.busy).toBe(0);
  });

  it('a worker giving up the job while it waits rejects with the signal’s reason and keeps its turn for nobody', async () => {
    const gate = new StepGate(1);
    const holder = await gate.enter('t');
    const ac = new AbortController();
    const waiting = gate.enter('t', ac.signal);
    ac.abort(new Error('worker closed'));
    await expect(waiting).rejects.toThrow('worker closed');
    expect(gate.waiting).toBe(0);
    holder.release();
    expect(gate.busy).toBe(0);
    await expect(gate.enter('t', ac.signal)).rejects.toThrow('worker closed');
  });

  it('drain hands back the runs that have not started (ReleaseJobError) and keeps the ones under way', async () => {
    const gate = new StepGate(1);
    const running = await gate.enter('t');
    const model = deferred();
    const back = running.idle(() => model.promise);
    const other = await gate.enter('t');
    const notStarted = gate.enter('t');
    model.resolve();
    await flush();
    gate.drain();
    await expect(notStarted).rejects.toBeInstanceOf(ReleaseJobError);
    other.release();
    await back;
    expect(gate.busy).toBe(1);
    running.release();
    expect(gate.busy).toBe(0);
  });

  it('refuses a gate without slots', () => {
    expect(() => new StepGate(0)).toThrow(/at least one slot/);
  });
});

describe('TenantTurns', () => {
  it('serves tenants in turns, each in FIFO order, and removes a waiter', () => {
    const t = new TenantTurns<string>();
    for (const x of ['a1', 'a2', 'a3']) t.push('a', x);
    t.push('b', 'b1');
    t.push('c', 'c1');
    expect(t.remove('a', 'a2')).toBe(true);
    expect(t.remove('a', 'zz')).toBe(false);
    const out: string[] = [];
    for (let x = t.shift(); x; x = t.shift()) out.push(x);
    expect(out).toEqual(['a1', 'b1', 'c1', 'a3']);
    expect(t.size).toBe(0);
  });
});
