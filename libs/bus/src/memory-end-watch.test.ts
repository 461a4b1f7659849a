import { describe, expect, it } from 'vitest';
import { MemoryRunEventStream } from './memory-events.js';

describe('MemoryRunEventStream.watchEnd', () => {
  it('reports the end with the latest error event published before it, and ignores other runs', async () => {
    const s = new MemoryRunEventStream();
    const watch = s.watchEnd('run-m1', AbortSignal.timeout(10_000));
    await watch.ready;
    await s.publish('run-m1', 't', 'values', { n: 1 });
    await s.publish('run-other', 't', 'error', { error: 'E', message: 'not mine' });
    await s.publish('run-other', 't', 'end', null);
    await s.publish('run-m1', 't', 'error', { error: 'ValueError', message: 'first' });
    await s.publish('run-m1', 't', 'error', { error: 'ValueError', message: 'boom' });
    await s.publish('run-m1', 't', 'end', null);
    const r = await watch.done;
    expect(r.kind).toBe('end');
    expect(r.kind === 'end' && JSON.parse(r.errorJson ?? 'null')).toEqual({ error: 'ValueError', message: 'boom' });
    await s.close();
  });

  it('reports an end already in the log at once, without an error for a run that had none', async () => {
    const s = new MemoryRunEventStream();
    await s.publish('run-m2', 't', 'values', 1);
    await s.publish('run-m2', 't', 'end', null);
    expect(await s.watchEnd('run-m2', AbortSignal.timeout(10_000)).done).toEqual({ kind: 'end' });
    await s.close();
  });

  it('keeps the error for the end when maxEventsPerRun dropped the error event itself', async () => {
    const s = new MemoryRunEventStream({ maxEventsPerRun: 1 });
    const watch = s.watchEnd('run-m3', AbortSignal.timeout(10_000));
    await s.publish('run-m3', 't', 'error', { error: 'TimeoutError', message: 'slow' });
    await s.publish('run-m3', 't', 'values', 2);
    await s.publish('run-m3', 't', 'end', null);
    const r = await watch.done;
    expect(r.kind === 'end' && JSON.parse(r.errorJson ?? 'null')).toEqual({ error: 'TimeoutError', message: 'slow' });
    await s.close();
  });

  it('ends with aborted on the signal, lost on close, and is not reported to after close()', async () => {
    const s = new MemoryRunEventStream();
    const ac = new AbortController();
    const aborted = s.watchEnd('run-m4', ac.signal);
    const closedByCaller = s.watchEnd('run-m4', AbortSignal.timeout(10_000));
    const onClose = s.watchEnd('run-m5', AbortSignal.timeout(10_000));
    ac.abort();
    expect(await aborted.done).toEqual({ kind: 'aborted' });
    closedByCaller.close();
    expect(await closedByCaller.done).toEqual({ kind: 'aborted' });
    await s.close();
    expect(await onClose.done).toEqual({ kind: 'lost' });
    expect(await s.watchEnd('run-m6', AbortSignal.timeout(10_000)).done).toEqual({ kind: 'lost' });
  });

  it('several watches of one run all see its end', async () => {
    const s = new MemoryRunEventStream();
    const a = s.watchEnd('run-m7', AbortSignal.timeout(10_000));
    const b = s.watchEnd('run-m7', AbortSignal.timeout(10_000));
    a.close();
    const c = s.watchEnd('run-m7', AbortSignal.timeout(10_000));
    await s.publish('run-m7', 't', 'end', null);
    expect(await Promise.all([a.done, b.done, c.done])).toEqual([{ kind: 'aborted' }, { kind: 'end' }, { kind: 'end' }]);
    await s.close();
  });
});
