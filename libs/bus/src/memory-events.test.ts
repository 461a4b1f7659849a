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

  it('keeps the retained bytes under maxBytes, dropping ended runs first, then the oldest events of running ones', async () => {
    const mb = 1024 * 1024;
    const s = new MemoryRunEventStream({ maxBytes: 3 * mb });
    const big = 'x'.repeat(mb);
    await s.publish('ended', 't', 'values', big);
    await s.publish('ended', 't', 'end', null);
    await s.publish('live', 't', 'values', big);
    await s.publish('live', 't', 'values', big);
    // Over the budget now: the ended run goes whole, the live run keeps both events.
    await s.publish('live', 't', 'values', big);
    expect(s.retainedBytes).toBeLessThanOrEqual(3 * mb);
    const ended: string[] = [];
    const readEnded = (async () => {
      for await (const e of s.subscribe('ended', { signal: AbortSignal.timeout(200) })) ended.push(e.event);
    })();
    await readEnded;
    expect(ended).toEqual([]);
    // Six more 1 MB events on one live run: only the newest ones stay, and the latest is always there.
    for (let i = 0; i < 6; i++) await s.publish('live', 't', 'values', `${i}${big}`);
    expect(s.retainedBytes).toBeLessThanOrEqual(3 * mb);
    const kept: string[] = [];
    for await (const e of s.subscribe('live', { signal: AbortSignal.timeout(200) })) kept.push(e.dataJson.slice(1, 2));
    expect(kept.at(-1)).toBe('5');
    expect(kept.length).toBeLessThanOrEqual(3);
    await s.close();
  });

  it('gives purged bytes back to the budget', async () => {
    const s = new MemoryRunEventStream();
    await s.publish('run-p', 't', 'values', 'x'.repeat(1000));
    expect(s.retainedBytes).toBeGreaterThan(1000);
    await s.purge('run-p');
    expect(s.retainedBytes).toBe(0);
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
