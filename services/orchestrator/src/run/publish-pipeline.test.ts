import { describe, expect, it, vi } from 'vitest';
import { PublishPipeline, LINGER_MS } from './publish-pipeline.js';

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
    await p.send('custom', 1);
    await p.send('messages/partial', 2);
    expect(s.calls.map((c) => c.event)).toEqual(['custom', 'messages/partial']);
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
    await p.send('custom', 1);
    await p.send('custom', 2);
    s.calls[0]!.settle(new Error('JetStream unavailable'));
    s.calls[1]!.settle();
    await expect(p.drain()).rejects.toThrow('JetStream unavailable');
    await expect(p.send('custom', 3)).rejects.toThrow('JetStream unavailable');
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

describe('PublishPipeline: step events together', () => {
  it('holds step events and hands them over together, in order, after the linger', async () => {
    vi.useFakeTimers();
    try {
      const s = heldStream();
      const p = new PublishPipeline(s, 'r', 't');
      await p.send('values', { n: 0 });
      await p.send('updates', { agent: 1 });
      vi.advanceTimersByTime(LINGER_MS - 1);
      await p.send('values', { n: 1 });
      expect(s.calls).toHaveLength(0);
      vi.advanceTimersByTime(1);
      expect(s.calls.map((c) => c.event)).toEqual(['values', 'updates', 'values']);
      // The next step's events start a new linger.
      await p.send('updates', { tools: 1 });
      expect(s.calls).toHaveLength(3);
      vi.advanceTimersByTime(LINGER_MS);
      expect(s.calls).toHaveLength(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it('hands what is held over at drain without waiting for the linger', async () => {
    vi.useFakeTimers();
    try {
      const s = heldStream();
      const p = new PublishPipeline(s, 'r', 't');
      await p.send('updates', { a: 1 });
      await p.send('values', { b: 1 });
      const d = p.drain();
      expect(s.calls.map((c) => c.event)).toEqual(['updates', 'values']);
      for (const c of s.calls) c.settle();
      await d;
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not hold token events: they go out at once, after what is held', async () => {
    const s = heldStream();
    const p = new PublishPipeline(s, 'r', 't');
    await p.send('updates', { a: 1 });
    await p.send('messages/partial', [{ content: 'It' }]);
    expect(s.calls.map((c) => c.event)).toEqual(['updates', 'messages/partial']);
  });
});
