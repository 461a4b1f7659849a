/**
 * Embedded mode with EMBEDDED_THREADS=orchestrator and orchestrator:2 (issue 9): the orchestrator
 * and the services it calls run in one or two worker threads, each with its own SQLite
 * connections; the gateway, webhook delivery and the run event log stay on the main thread. Every hop between them is exercised here: a run
 * the gateway enqueues (queue wake-up →), its tool calls and events (bus, run events ←), a
 * webhook the orchestrator enqueues (queue wake-up ←), a cancel and a thread deletion (bus →),
 * the thread's state from the main thread's own checkpoint connection, and a restart on the same files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { threadId } from 'node:worker_threads';
import { pino } from 'pino';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { HELLO_TURNS, poll, scripted, startWebhookReceiver } from './helpers.js';

type Msg = { type: string; content: string };
const THREADED = { EMBEDDED_THREADS: 'orchestrator', LOG_LEVEL: 'warn', WEBHOOK_ALLOW: '127.0.0.0/8' };

describe.each([
  { mode: 'orchestrator', count: 1 },
  { mode: 'orchestrator:2', count: 2 },
])('embedded mode with EMBEDDED_THREADS=$mode', ({ mode, count }) => {
  let dataDir: string;
  let server: EmbeddedServer;
  let client: Client;
  const start = async () => {
    server = await startEmbedded({ env: { DATA_DIR: dataDir, ...THREADED, EMBEDDED_THREADS: mode }, port: 0 });
    client = new Client({ apiUrl: server.url });
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-threads-'));
    await start();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs the orchestrator in threads other than the caller', () => {
    expect(server.orchestratorThreadId).toBeTypeOf('number');
    expect(server.orchestratorThreadIds).toHaveLength(count);
    expect(new Set(server.orchestratorThreadIds).size).toBe(count);
    expect(server.orchestratorThreadIds).not.toContain(threadId);
  });

  it('executes concurrent runs, each exactly once, wherever they are taken', async () => {
    // More runs than threads at once: each thread's queue worker competes for them, none may run twice.
    const results = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const thread = await client.threads.create();
        const values = (await client.runs.wait(thread.thread_id, 'agent', {
          input: { messages: [{ role: 'user', content: `run ${i}` }] },
          config: scripted(HELLO_TURNS),
        })) as { messages: Msg[] };
        const runs = await client.runs.list(thread.thread_id);
        return { types: values.messages.map((m) => m.type), statuses: runs.map((r) => r.status) };
      }),
    );
    for (const r of results) {
      expect(r.types).toEqual(['human', 'ai', 'tool', 'ai', 'tool', 'ai']);
      expect(r.statuses).toEqual(['success']);
    }
  });

  it('executes a run with tool calls through runs.wait and reads its state back', async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'write hello.txt and read it back' }] },
      config: scripted(HELLO_TURNS),
    })) as { messages: Msg[] };
    expect(values.messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai', 'tool', 'ai']);
    expect(values.messages.at(-1)!.content).toBe('The file says: hello from the e2e test');
    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as { messages: Msg[] }).messages.map((m) => m.content)).toEqual(values.messages.map((m) => m.content));
    const history = await client.threads.getHistory(thread.thread_id);
    expect(history.length).toBeGreaterThan(3);
  });

  it('streams the run events the thread publishes over SSE', async () => {
    const thread = await client.threads.create();
    const events: string[] = [];
    for await (const chunk of client.runs.stream(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'time?' }] },
      config: scripted([{ tool_calls: [{ name: 'now', args: {} }] }, { content: 'It is now.' }]),
      streamMode: ['values', 'updates'],
    })) {
      events.push(chunk.event);
    }
    expect(events[0]).toBe('metadata');
    expect(events).toContain('updates');
    expect(events).toContain('values');
    expect(events.at(-1)).toBe('end');
  });

  it('delivers the webhook the thread enqueues from the main thread', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: 'hello' }] },
        config: scripted(HELLO_TURNS),
        webhook: receiver.url,
      });
      await receiver.waitFor(1);
      expect(receiver.deliveries[0]!.json).toMatchObject({ run_id: run.run_id, thread_id: thread.thread_id, status: 'success' });
    } finally {
      await receiver.close();
    }
  });

  it('cancels a running run in whichever thread holds it and deletes a thread with its checkpoints and workspace', async () => {
    const thread = await client.threads.create();
    const slow = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'take your time' }] },
      config: scripted([{ content: 'too late', delay_ms: 60_000 }]),
    });
    await poll(async () => ((await client.runs.get(thread.thread_id, slow.run_id)).status === 'running' ? true : undefined), 30_000, 50);
    await client.runs.cancel(thread.thread_id, slow.run_id, true);
    expect((await client.runs.get(thread.thread_id, slow.run_id)).status).toBe('interrupted');
    await poll(async () => ((await client.threads.get(thread.thread_id)).status === 'idle' ? true : undefined), 30_000, 50);

    await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'x' }] }, config: scripted(HELLO_TURNS) });
    const ws = path.join(dataDir, 'workspaces', 'default', thread.thread_id);
    expect(existsSync(ws)).toBe(true);
    await client.threads.delete(thread.thread_id);
    expect(existsSync(ws)).toBe(false);
    await expect(client.threads.getState(thread.thread_id)).rejects.toThrow(/404|not found/i);
  });

  it('stops cleanly and starts again on the same files', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'first' }] }, config: scripted([{ content: 'one' }]) });
    await server.close();
    await start();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'second' }] },
      config: scripted([{ content: 'two' }]),
    })) as { messages: Msg[] };
    expect(values.messages.map((m) => m.content)).toEqual(['first', 'one', 'second', 'two']);
  });
});

describe('EMBEDDED_THREADS configuration', () => {
  it('refuses an unknown value, naming the variable', async () => {
    await expect(
      startEmbedded({ env: { DATA_DIR: mkdtempSync(path.join(tmpdir(), 'agentloop-threads-')), EMBEDDED_THREADS: 'gateway' }, port: 0 }),
    ).rejects.toThrow(/EMBEDDED_THREADS must be "auto", "none", "orchestrator" or "orchestrator:N"/);
  });

  it.each(['orchestrator:0', 'orchestrator:17', 'orchestrator:two'])('refuses %s', async (value) => {
    await expect(
      startEmbedded({ env: { DATA_DIR: mkdtempSync(path.join(tmpdir(), 'agentloop-threads-')), EMBEDDED_THREADS: value }, port: 0 }),
    ).rejects.toThrow(/EMBEDDED_THREADS must be/);
  });

  it('reports a thread that fails to start instead of hanging', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agentloop-threads-'));
    try {
      // Only the orchestrator thread reads RUN_CONCURRENCY: its start fails, and so must startEmbedded.
      await expect(
        startEmbedded({ env: { DATA_DIR: dir, ...THREADED, EMBEDDED_THREADS: 'orchestrator:2', RUN_CONCURRENCY: 'lots' }, port: 0 }),
      ).rejects.toThrow(/orchestrator thread failed.*RUN_CONCURRENCY/s);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("hands the threads' log lines to the application's own logger, each under the service that wrote it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agentloop-threads-'));
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
        cb();
      },
    });
    const logged = await startEmbedded({
      env: { DATA_DIR: dir, ...THREADED, EMBEDDED_THREADS: 'orchestrator:2', LOG_LEVEL: 'info' },
      port: 0,
      logger: pino({ level: 'info' }, sink),
    });
    try {
      // Each thread's tool-runner says it serves (lines only the threads write), before the thread says it is ready.
      expect(lines.filter((l) => l.msg === 'tool-runner serving').map((l) => l.component)).toEqual(['tool-runner', 'tool-runner']);
    } finally {
      await logged.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
