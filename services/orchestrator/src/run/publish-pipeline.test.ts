import { describe, expect, it, vi } from 'vitest';
import { PublishPipeline, UPDATES_LINGER_MS } from './publish-pipeline.js';

/** A stream whose publishes settle only when the test says so. */
function heldStream() {
  const calls: Array<{ event: string; settle: (err?: Error) => void }> = [];
  return {
    calls,
    publish(_runId: string, _threadId: string, event: string): Promise<number> {
      return new Promise<number>((resolve, reject) => {
        calls.push({ event, settle: (err) => (err ? reject(err) : resolve(calls.length)) });
      });
    },
  };
}

describe('PublishPipeline', () => {
  it('hands events over in order without waiting for each to be stored; drain waits for all', async () => {
    const s = heldStream();
    const p = new PublishPipeline(s, 'r', 't');
    await p.send('updates', 1);
    await p.send('values', 2);
    expect(s.calls.map((c) => c.event)).toEqual(['updates', 'values']);
    let drained = false;
    const d = p.drain().then(() => (drained = true));
    s.calls[0]!.settle();
    await new Promise((r) => setImmediate(r));
    expect(drained).toBe(false);
    s.calls[1]!.settle();
    await d;
    expect(drained).toBe(true);
  });

  it('fails drain, and the next send, with the first publish failure', async () => {
    const s = heldStream();
    const p = new PublishPipeline(s, 'r', 't');
    await p.send('updates', 1);
    await p.send('values', 2);
    s.calls[0]!.settle(new Error('JetStream unavailable'));
    s.calls[1]!.settle();
    await expect(p.drain()).rejects.toThrow('JetStream unavailable');
    await expect(p.send('values', 3)).rejects.toThrow('JetStream unavailable');
    expect(s.calls).toHaveLength(2);
  });

  it('waits for the oldest events once 256 are unstored', async () => {
    const s = heldStream();
    const p = new PublishPipeline(s, 'r', 't');
    for (let i = 0; i < 255; i++) await p.send('messages', i);
    let sent = false;
    const last = p.send('messages', 255).then(() => (sent = true));
    await new Promise((r) => setImmediate(r));
    expect(sent).toBe(false);
    for (const c of s.calls) c.settle();
    await last;
    expect(sent).toBe(true);
  });
});

describe('PublishPipeline: a step in one message', () => {
  it('hands an update over together with the values after it, in order', async () => {
    const s = heldStream();
    const p = new PublishPipeline(s, 'r', 't');
    await p.send('updates', { agent: 1 });
    expect(s.calls).toHaveLength(0);
    await p.send('values', { n: 1 });
    expect(s.calls.map((c) => c.event)).toEqual(['updates', 'values']);
  });

  it('hands a held update over by itself after the linger, and at drain', async () => {
    vi.useFakeTimers();
    try {
      const s = heldStream();
      const p = new PublishPipeline(s, 'r', 't');
      await p.send('updates', { a: 1 });
      vi.advanceTimersByTime(UPDATES_LINGER_MS);
      expect(s.calls.map((c) => c.event)).toEqual(['updates']);
      await p.send('updates', { b: 1 });
      const d = p.drain();
      expect(s.calls.map((c) => c.event)).toEqual(['updates', 'updates']);
      for (const c of s.calls) c.settle();
      await d;
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not hold token events: they go out at once, after any held update', async () => {
    const s = heldStream();
    const p = new PublishPipeline(s, 'r', 't');
    await p.send('updates', { a: 1 });
    await p.send('messages/partial', [{ content: 'It' }]);
    expect(s.calls.map((c) => c.event)).toEqual(['updates', 'messages/partial']);
  });
});
