import { describe, expect, it } from 'vitest';
import { MemoryRunEventStream } from './memory-events.js';
import { runEventStreamContract } from './testing/index.js';

runEventStreamContract('MemoryRunEventStream', async () => new MemoryRunEventStream());

describe('MemoryRunEventStream', () => {
  it('keeps only the newest maxEventsPerRun events of a run', async () => {
    const s = new MemoryRunEventStream({ maxEventsPerRun: 2 });
    await s.publish('run-1', 't', 'values', 1);
    const b = await s.publish('run-1', 't', 'values', 2);
    const c = await s.publish('run-1', 't', 'end', null);
    const ids: number[] = [];
    for await (const e of s.subscribe('run-1')) ids.push(e.id);
    expect(ids).toEqual([b, c]);
    await s.close();
  });

  it('ends live iterations on close()', async () => {
    const s = new MemoryRunEventStream();
    const iter = s.subscribe('run-2')[Symbol.asyncIterator]();
    const next = iter.next();
    await s.close();
    expect((await next).done).toBe(true);
  });

  it('rejects a run id that cannot be a subject token', async () => {
    const s = new MemoryRunEventStream();
    await expect(s.publish('a.b', 't', 'values', 1)).rejects.toThrow(/Invalid run id "a\.b"/);
    await s.close();
  });
});
