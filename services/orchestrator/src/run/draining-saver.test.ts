import { describe, expect, it } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { DrainingSaver, stopAfterCheckpointWhen, trackingWrites, WorkerDrainingError } from './draining-saver.js';
import { CancelRegistry, RunCancelledError } from './cancellations.js';

const config = { configurable: { thread_id: 't1:th1', checkpoint_ns: '' } };

describe('draining checkpointer', () => {
  it('saves, then fails the put once draining, so the run stops after a persisted step', async () => {
    const saver = new MemorySaver();
    let draining = false;
    const wrapped = stopAfterCheckpointWhen(saver, () => draining);
    await wrapped.put(config, { ...emptyCheckpoint(), id: 'c1' }, { source: 'loop', step: 0, parents: {} }, {});
    draining = true;
    await expect(wrapped.put(config, { ...emptyCheckpoint(), id: 'c2' }, { source: 'loop', step: 1, parents: {} }, {})).rejects.toBeInstanceOf(
      WorkerDrainingError,
    );
    // Both were saved; the other methods reach the saver (bound to it).
    expect((await wrapped.getTuple(config))?.checkpoint.id).toBe('c2');
    const ids: string[] = [];
    for await (const t of wrapped.list(config)) ids.push(t.checkpoint.id);
    expect(ids.sort()).toEqual(['c1', 'c2']);
  });
});

describe('DrainingSaver (both, as the executor builds it)', () => {
  it('counts a put in flight and fails it after saving once draining', async () => {
    const saver = new MemorySaver();
    let draining = false;
    const both = new DrainingSaver(saver, () => draining);
    draining = true;
    const put = both.put(config, { ...emptyCheckpoint(), id: 'c1' }, { source: 'loop', step: 0, parents: {} }, {});
    const waiting = both.settled('t1:th1');
    await expect(put).rejects.toBeInstanceOf(WorkerDrainingError);
    await waiting;
    expect((await both.getTuple(config))?.checkpoint.id).toBe('c1');
    expect(both.getNextVersion(undefined)).toBe(saver.getNextVersion(undefined));
    await both.deleteThread('t1:th1');
    expect(await saver.getTuple(config)).toBeUndefined();
  });
});

describe('cancel registry', () => {
  it('aborts a registered run with a RunCancelledError; unknown runs are not here', () => {
    const reg = new CancelRegistry();
    const c = reg.register('r1');
    expect(reg.cancel('r2', 'x')).toBe(false);
    expect(reg.cancel('r1', 'by the client')).toBe(true);
    expect(c.signal.reason).toBeInstanceOf(RunCancelledError);
    expect((c.signal.reason as Error).message).toBe('by the client');
  });

  it('release forgets only the switch it registered (a newer execution of the run keeps its own)', () => {
    const reg = new CancelRegistry();
    const old = reg.register('r1');
    const newer = reg.register('r1');
    reg.release('r1', old);
    expect(reg.cancel('r1', 'x')).toBe(true);
    expect(newer.signal.aborted).toBe(true);
    reg.release('r1', newer);
    expect(reg.cancel('r1', 'x')).toBe(false);
  });
});

describe('tracking checkpoint writes in flight', () => {
  it('settled waits for the writes of that thread started so far, not of other threads', async () => {
    const saver = new MemorySaver();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slowPut = saver.put.bind(saver);
    saver.put = async (...args: Parameters<MemorySaver['put']>) => {
      await gate;
      return slowPut(...args);
    };
    const { saver: tracked, writes } = trackingWrites(saver);
    const put = tracked.put(config, { ...emptyCheckpoint(), id: 'c1' }, { source: 'loop', step: 0, parents: {} }, {});
    let settled = false;
    const waiting = writes.settled('t1:th1').then(() => (settled = true));
    await writes.settled('t1:other');
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    release();
    await put;
    await waiting;
    expect(settled).toBe(true);
    expect((await saver.getTuple(config))?.checkpoint.id).toBe('c1');
  });

  it('a failed write settles too', async () => {
    const saver = new MemorySaver();
    saver.putWrites = async () => {
      throw new Error('disk full');
    };
    const { saver: tracked, writes } = trackingWrites(saver);
    await expect(tracked.putWrites({ configurable: { ...config.configurable, checkpoint_id: 'c1' } }, [['x', 1]], 'task')).rejects.toThrow('disk full');
    await writes.settled('t1:th1');
  });
});
