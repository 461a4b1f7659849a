import { describe, expect, it } from 'vitest';
import { withSpan } from './instruments.js';
import { startTestTelemetry } from './testing.js';
import { tracedMethods } from './traced-methods.js';

class Repo {
  private readonly rows = new Map<string, number>([['a', 1]]);
  async get(key: string): Promise<number | undefined> {
    return this.rows.get(key);
  }
  async fail(): Promise<never> {
    throw new Error('no such row');
  }
  size(): number {
    return this.rows.size;
  }
  async *keys(): AsyncGenerator<string> {
    yield* this.rows.keys();
  }
}

describe('tracedMethods', () => {
  it('returns the object itself while tracing is off', () => {
    const repo = new Repo();
    expect(tracedMethods(repo, 'repo')).toBe(repo);
  });

  it('puts a child span around each call that returns a promise, and leaves the rest untraced', async () => {
    await using t = await startTestTelemetry();
    const repo = tracedMethods(new Repo(), 'repo');
    await withSpan('parent', {}, async () => {
      expect(await repo.get('a')).toBe(1);
      await expect(repo.fail()).rejects.toThrow('no such row');
      expect(repo.size()).toBe(1);
      const keys: string[] = [];
      for await (const k of repo.keys()) keys.push(k);
      expect(keys).toEqual(['a']);
    });
    const spans = t.spans();
    const parent = spans.find((s) => s.name === 'parent');
    const traced = spans.filter((s) => s.name.startsWith('repo.'));
    expect(traced.map((s) => s.name).sort()).toEqual(['repo.fail', 'repo.get', 'repo.size']);
    for (const s of traced) expect(s.parentSpanContext?.spanId ?? (s as { parentSpanId?: string }).parentSpanId).toBe(parent?.spanContext().spanId);
    expect(traced.find((s) => s.name === 'repo.fail')?.status.message).toBe('no such row');
    expect(repo).toBeInstanceOf(Repo);
  });
});
