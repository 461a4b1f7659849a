/**
 * Poison runs (issue 10, deliverable 2) in the cluster: a run whose worker is SIGKILLed every
 * time it takes the job stalls past RUN_MAX_STALLED, the queue fails its job, and the sweeper
 * dead-letters it with the reason; it is listed by `GET /runs/dead-letter` and, once the fault is
 * gone, `POST .../redrive` runs it to success. A delegated child whose job fails that way ends its
 * suspended parent's wait: the parent gets an error result and its model answers. Both modes:
 * the cluster (BullMQ: the orchestrator process is killed and another started) and embedded (the
 * SqliteQueue: the whole process is killed and started again on the same DATA_DIR).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@agentloop/devservers';
import { poll, scripted, startCluster, type ClusterHarness } from './helpers.js';
import { startEmbeddedProcess, type EmbeddedProcess } from './embedded-process.js';

interface ApiRun {
  run_id: string;
  thread_id: string;
  status: string;
  dead_letter?: { reason: string; dead_lettered_at: string };
}

describe('dead letter (cluster): poison runs', () => {
  let cluster: ClusterHarness;
  let next = 2;

  beforeAll(async () => {
    cluster = await startCluster({
      env: {
        RUN_MAX_STALLED: '1',
        RUN_LOCK_MS: '2000',
        RUN_STALLED_INTERVAL_MS: '1000',
        RUN_SWEEP_INTERVAL_MS: '1000',
        RUN_SWEEP_AFTER_MS: '1000',
      },
    });
  }, 180_000);
  afterAll(async () => cluster?.stop());

  const api = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> => {
    const res = await fetch(`${cluster.url}${path}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as T };
  };

  /**
   * The fault: whenever an orchestrator logs that it started a run `victim` picks, it is
   * SIGKILLed (mid-run) and a fresh one started. Returns a stop function (the fault gone).
   */
  function killWorkersOf(victim: (line: string) => boolean): { stop: () => Promise<void>; kills: () => number } {
    let from = cluster.logs.length;
    let kills = 0;
    let stopped = false;
    let busy: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      const lines = cluster.logs.slice(from);
      from = cluster.logs.length;
      for (const line of lines) {
        const m = /^\[(orchestrator#\d+)\] .*run started/.exec(line);
        if (!m || !victim(line) || stopped) continue;
        const proc = cluster.procs.get(m[1]!);
        if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) continue;
        proc.child.kill('SIGKILL');
        kills++;
        busy = busy.then(() => cluster.startOrchestrator(next++)).catch(() => undefined);
      }
    }, 20);
    return {
      kills: () => kills,
      async stop() {
        stopped = true;
        clearInterval(timer);
        await busy;
      },
    };
  }

  it('a run whose worker dies every time ends dead-lettered with a reason, is listed, and a redrive after the fault is gone runs it to success', async () => {
    const thread = (await api<{ thread_id: string }>('POST', '/threads', {})).json;
    const run = (
      await api<ApiRun>('POST', `/threads/${thread.thread_id}/runs`, {
        assistant_id: 'agent',
        input: { messages: [{ role: 'user', content: 'hi' }] },
        config: scripted([{ content: 'survived', delay_ms: 3000 }]),
      })
    ).json;
    const fault = killWorkersOf((l) => l.includes(run.run_id));
    try {
      const dead = await poll(
        async () => {
          const r = (await api<ApiRun>('GET', `/threads/${thread.thread_id}/runs/${run.run_id}`)).json;
          return r.dead_letter ? r : undefined;
        },
        120_000,
        250,
      );
      expect(dead).toMatchObject({ status: 'error', dead_letter: { reason: expect.stringMatching(/RUN_MAX_STALLED/) } });
      expect(fault.kills()).toBe(2); // RUN_MAX_STALLED=1: taken over once, failed at the second death
    } finally {
      await fault.stop();
    }
    const listed = (await api<ApiRun[]>('GET', '/runs/dead-letter?limit=100')).json;
    expect(listed.map((r) => r.run_id)).toContain(run.run_id);
    expect((await api<{ status: string }>('GET', `/threads/${thread.thread_id}`)).json.status).toBe('error');

    const redriven = await api<ApiRun>('POST', `/threads/${thread.thread_id}/runs/${run.run_id}/redrive`);
    expect(redriven.status).toBe(202);
    expect(redriven.json).toMatchObject({ status: 'pending' });
    // A join follows the new attempt: the dead-lettered attempt's event log was cleared.
    const joined = await api<{ messages: Array<{ type: string; content: string }> }>('GET', `/threads/${thread.thread_id}/runs/${run.run_id}/join`);
    expect(joined.json.messages.at(-1)).toMatchObject({ type: 'ai', content: 'survived' });
    const done = await poll(
      async () => {
        const r = (await api<ApiRun>('GET', `/threads/${thread.thread_id}/runs/${run.run_id}`)).json;
        return r.status === 'success' || r.status === 'error' ? r : undefined;
      },
      60_000,
      250,
    );
    expect(done.status).toBe('success');
    expect(done.dead_letter).toBeUndefined();
    const state = (await api<{ values: { messages: Array<{ type: string; content: string }> } }>('GET', `/threads/${thread.thread_id}/state`)).json;
    expect(state.values.messages.at(-1)).toMatchObject({ type: 'ai', content: 'survived' });
    expect((await api<ApiRun[]>('GET', '/runs/dead-letter?limit=100')).json.map((r) => r.run_id)).not.toContain(run.run_id);
    expect((await api('POST', `/threads/${thread.thread_id}/runs/${run.run_id}/redrive`)).status).toBe(409);
  }, 240_000);

  it('a delegated child whose job fails for good: the suspended parent gets an error result and its model answers', async () => {
    const thread = (await api<{ thread_id: string }>('POST', '/threads', {})).json;
    const parent = (
      await api<ApiRun>('POST', `/threads/${thread.thread_id}/runs`, {
        assistant_id: 'agent',
        input: { messages: [{ role: 'user', content: '@general delegate this' }] },
        config: {
          configurable: {
            model: {
              provider: 'scripted',
              turns: [{ tool_calls: [{ name: 'delegate_task', args: { task: 'poison task' } }] }, { content: 'parent answered' }],
            },
            delegates: { '*': [{ content: 'child done', delay_ms: 3000 }] },
          },
        },
      })
    ).json;
    // Every run but the parent (its child) kills its worker.
    const fault = killWorkersOf((l) => /"run_id":"[^"]+"/.test(l) && !l.includes(`"run_id":"${parent.run_id}"`));
    let final: ApiRun;
    try {
      final = await poll(
        async () => {
          const r = (await api<ApiRun>('GET', `/threads/${thread.thread_id}/runs/${parent.run_id}`)).json;
          return r.status === 'success' || r.status === 'error' ? r : undefined;
        },
        150_000,
        250,
      );
    } finally {
      await fault.stop();
    }
    expect(final.status).toBe('success');
    const children = (await api<ApiRun[]>('GET', `/runs/${parent.run_id}/children`)).json;
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ status: 'error', dead_letter: { reason: expect.stringMatching(/RUN_MAX_STALLED/) } });
    const state = (await api<{ values: { messages: Array<{ type: string; name?: string; content: string }> } }>('GET', `/threads/${thread.thread_id}/state`))
      .json;
    expect(state.values.messages.find((m) => m.name === 'delegate_task')?.content).toMatch(/dead-lettered/);
    expect(state.values.messages.at(-1)).toMatchObject({ type: 'ai', content: 'parent answered' });
    expect((await api<ApiRun[]>('GET', '/runs/dead-letter?limit=100')).json.map((r) => r.run_id)).toContain(children[0]!.run_id);
  }, 240_000);
});

describe('dead letter (embedded): poison runs, the process SIGKILLed each time it takes the job', () => {
  let dataDir: string;
  let port: number;
  let server: EmbeddedProcess | undefined;
  const ENV = { RUN_MAX_STALLED: '1', RUN_SWEEP_INTERVAL_MS: '1000', RUN_SWEEP_AFTER_MS: '1000' };

  afterEach(async () => {
    await server?.stop();
    server = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const api = async <T>(method: string, p: string, body?: unknown): Promise<{ status: number; json: T }> => {
    const res = await fetch(`${server!.url}${p}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as T };
  };

  /** Kills the process whenever it logs that it started a run `victim` picks, and starts it again, until `done` says so. Returns the kills. */
  async function killUntil(victim: (line: string) => boolean, done: () => Promise<boolean>): Promise<number> {
    let kills = 0;
    for (;;) {
      const seen = await poll(
        async () => (server!.logs.some((l) => /run started/.test(l) && victim(l)) ? 'started' : (await done()) ? 'done' : undefined),
        120_000,
        50,
      );
      if (seen === 'done') return kills;
      await server!.kill();
      kills++;
      server = await startEmbeddedProcess({ dataDir, port, env: ENV });
    }
  }

  it('a poison run ends dead-lettered with a reason, is listed, and a redrive after the fault is gone runs it to success', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-dead-letter-'));
    port = await freePort();
    server = await startEmbeddedProcess({ dataDir, port, env: ENV });
    const thread = (await api<{ thread_id: string }>('POST', '/threads', {})).json;
    const run = (
      await api<ApiRun>('POST', `/threads/${thread.thread_id}/runs`, {
        assistant_id: 'agent',
        input: { messages: [{ role: 'user', content: 'hi' }] },
        config: scripted([{ content: 'survived', delay_ms: 3000 }]),
      })
    ).json;
    const get = async () => (await api<ApiRun>('GET', `/threads/${thread.thread_id}/runs/${run.run_id}`)).json;
    const kills = await killUntil(
      (l) => l.includes(run.run_id),
      async () => !!(await get()).dead_letter,
    );
    expect(kills).toBe(2);
    expect(await get()).toMatchObject({ status: 'error', dead_letter: { reason: expect.stringMatching(/RUN_MAX_STALLED/) } });
    expect((await api<ApiRun[]>('GET', '/runs/dead-letter')).json.map((r) => r.run_id)).toEqual([run.run_id]);

    expect((await api('POST', `/threads/${thread.thread_id}/runs/${run.run_id}/redrive`)).status).toBe(202);
    const done = await poll(
      async () => {
        const r = await get();
        return r.status === 'success' || r.status === 'error' ? r : undefined;
      },
      60_000,
      200,
    );
    expect(done.status).toBe('success');
    const state = (await api<{ values: { messages: Array<{ type: string; content: string }> } }>('GET', `/threads/${thread.thread_id}/state`)).json;
    expect(state.values.messages.at(-1)).toMatchObject({ type: 'ai', content: 'survived' });
    expect((await api<{ status: string }>('GET', `/threads/${thread.thread_id}`)).json.status).toBe('idle');
    expect((await api<ApiRun[]>('GET', '/runs/dead-letter')).json).toEqual([]);
  }, 240_000);

  it('a delegated child whose job fails for good: the suspended parent gets an error result and its model answers', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-dead-letter-'));
    port = await freePort();
    server = await startEmbeddedProcess({ dataDir, port, env: ENV });
    const thread = (await api<{ thread_id: string }>('POST', '/threads', {})).json;
    const parent = (
      await api<ApiRun>('POST', `/threads/${thread.thread_id}/runs`, {
        assistant_id: 'agent',
        input: { messages: [{ role: 'user', content: '@general delegate this' }] },
        config: {
          configurable: {
            model: {
              provider: 'scripted',
              turns: [{ tool_calls: [{ name: 'delegate_task', args: { task: 'poison task' } }] }, { content: 'parent answered' }],
            },
            delegates: { '*': [{ content: 'child done', delay_ms: 3000 }] },
          },
        },
      })
    ).json;
    const get = async () => (await api<ApiRun>('GET', `/threads/${thread.thread_id}/runs/${parent.run_id}`)).json;
    const kills = await killUntil(
      (l) => /"run_id":"[^"]+"/.test(l) && !l.includes(`"run_id":"${parent.run_id}"`),
      async () => ['success', 'error'].includes((await get()).status),
    );
    expect(kills).toBe(2);
    expect((await get()).status).toBe('success');
    const children = (await api<ApiRun[]>('GET', `/runs/${parent.run_id}/children`)).json;
    expect(children).toMatchObject([{ status: 'error', dead_letter: { reason: expect.stringMatching(/RUN_MAX_STALLED/) } }]);
    const state = (await api<{ values: { messages: Array<{ type: string; name?: string; content: string }> } }>('GET', `/threads/${thread.thread_id}/state`))
      .json;
    expect(state.values.messages.find((m) => m.name === 'delegate_task')?.content).toMatch(/dead-lettered/);
    expect(state.values.messages.at(-1)).toMatchObject({ type: 'ai', content: 'parent answered' });
  }, 240_000);
});
