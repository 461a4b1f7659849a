import { describe, expect, it } from 'vitest';
import { MemoryBus, MemoryRunEventStream } from '@agentloop/bus';
import type { OrchestratorThread, OrchestratorThreadDeps } from './orchestrator-thread.js';
import { startOrchestratorPool } from './orchestrator-pool.js';
import type { WakeMessage } from './queue-wake.js';

/** A stand-in for one orchestrator thread: records what the pool gives it and asks of it. */
class FakeThread implements OrchestratorThread {
  readonly woken: WakeMessage[] = [];
  stopped = 0;
  fail!: (err: Error) => void;
  readonly failed = new Promise<never>((_, reject) => (this.fail = reject));
  readonly port = { postMessage: (m: WakeMessage) => void this.woken.push(m) };
  readonly telemetry = { flush: async () => undefined, close: () => undefined };
  constructor(
    readonly threadId: number,
    readonly deps: OrchestratorThreadDeps,
  ) {
    this.failed.catch(() => undefined);
  }
  async stop(): Promise<void> {
    this.stopped++;
  }
}

function fakeStarts(failAt?: number) {
  const threads: FakeThread[] = [];
  let n = 0;
  const start = async (deps: OrchestratorThreadDeps): Promise<OrchestratorThread> => {
    const i = n++;
    if (i === failAt) throw new Error(`thread ${i} could not start`);
    const t = new FakeThread(100 + i, deps);
    threads.push(t);
    return t;
  };
  return { threads, start };
}

const base = () => ({ env: {}, dataDir: '/nowhere', bus: new MemoryBus(), events: new MemoryRunEventStream(), wakeQueues: [], mainQueueOwner: 'main' });

describe('a pool of orchestrator threads', () => {
  it('has every thread count the main thread and all its siblings as live queue owners, not itself', async () => {
    const { threads, start } = fakeStarts();
    const pool = await startOrchestratorPool({ ...base(), threads: 3, start });
    expect(pool.threadIds).toEqual([100, 101, 102]);
    const owners = threads.map((t) => t.deps.queueOwner!);
    expect(new Set(owners).size).toBe(3);
    for (const t of threads) {
      expect(t.deps.liveQueueOwners).not.toContain(t.deps.queueOwner);
      expect([...t.deps.liveQueueOwners].sort()).toEqual(['main', ...owners.filter((o) => o !== t.deps.queueOwner)].sort());
    }
  });

  it('wakes every thread for each job the main thread adds', async () => {
    const { threads, start } = fakeStarts();
    const pool = await startOrchestratorPool({ ...base(), threads: 2, start });
    pool.port.postMessage({ t: 'wake', queue: 'runs' });
    for (const t of threads) expect(t.woken).toEqual([{ t: 'wake', queue: 'runs' }]);
  });

  it('fails as soon as any one thread fails', async () => {
    const { threads, start } = fakeStarts();
    const pool = await startOrchestratorPool({ ...base(), threads: 2, start });
    threads[1]!.fail(new Error('the orchestrator thread exited (code 1) while the server was running'));
    await expect(pool.failed).rejects.toThrow(/exited \(code 1\)/);
  });

  it('stops every thread', async () => {
    const { threads, start } = fakeStarts();
    const pool = await startOrchestratorPool({ ...base(), threads: 3, start });
    await pool.stop();
    expect(threads.map((t) => t.stopped)).toEqual([1, 1, 1]);
  });

  it('stops the threads that started when another one fails to start, and reports that failure', async () => {
    const { threads, start } = fakeStarts(1);
    await expect(startOrchestratorPool({ ...base(), threads: 3, start })).rejects.toThrow('thread 1 could not start');
    expect(threads).toHaveLength(2);
    expect(threads.map((t) => t.stopped)).toEqual([1, 1]);
  });

  it('refuses fewer than one thread', async () => {
    await expect(startOrchestratorPool({ ...base(), threads: 0, start: fakeStarts().start })).rejects.toThrow(/at least one thread/);
  });
});
