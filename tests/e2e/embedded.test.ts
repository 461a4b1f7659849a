import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { verifyWebhookSignature } from '@agentloop/gateway';
import { HELLO_TURNS, scripted, startWebhookReceiver } from './helpers.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

const SECRET = 'e2e-webhook-secret';

describe('embedded mode, end to end', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  let client: Client;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-e2e-'));
    // No WEBHOOK_ALLOW on purpose: this test relies on (and so covers) embedded mode's loopback default
    // for the receiver on 127.0.0.1. Every other test that delivers to a local receiver sets it.
    server = await startEmbedded({
      env: { DATA_DIR: dataDir, EMBEDDED_THREADS: EMBEDDED_TEST_THREADS, LOG_LEVEL: 'warn', WEBHOOK_SECRET: SECRET, WEBHOOK_BACKOFF_MS: '50' },
      port: 0,
    });
    client = new Client({ apiUrl: server.url });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers /ok', async () => {
    const res = await fetch(`${server.url}/ok`);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('runs a scripted agent that writes, reads back and answers, through the SDK runs.wait', async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'write hello.txt and read it back' }] },
      config: scripted(HELLO_TURNS),
    })) as { messages: Array<{ type: string; content: string; name?: string }> };
    const msgs = values.messages;
    expect(msgs.at(-1)).toMatchObject({ type: 'ai', content: 'The file says: hello from the e2e test' });
    const tools = msgs.filter((m) => m.type === 'tool');
    expect(tools.map((t) => t.content)).toEqual(['Wrote 23 bytes to outputs/hello.txt', 'hello from the e2e test']);
    const file = path.join(dataDir, 'workspaces', 'default', thread.thread_id, 'outputs', 'hello.txt');
    expect(readFileSync(file, 'utf8')).toBe('hello from the e2e test');
    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as { messages: unknown[] }).messages).toHaveLength(msgs.length);
  });

  it('delivers the webhook of a background run exactly once, signed, with status success', async () => {
    const receiver = await startWebhookReceiver({ failFirst: 1 });
    try {
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: 'hello' }] },
        config: scripted(HELLO_TURNS),
        webhook: receiver.url,
      });
      await client.runs.join(thread.thread_id, run.run_id);
      await receiver.waitFor(1);
      await new Promise((r) => setTimeout(r, 500)); // a duplicate would arrive by now
      expect(receiver.deliveries).toHaveLength(1);
      const d = receiver.deliveries[0]!;
      expect(d.json).toMatchObject({ run_id: run.run_id, thread_id: thread.thread_id, status: 'success' });
      expect(d.headers['webhook-id']).toBe(run.run_id);
      expect(verifyWebhookSignature(SECRET, d.headers as Record<string, string>, d.body)).toBe(true);
      const final = await client.runs.get(thread.thread_id, run.run_id);
      expect(final.status).toBe('success');
      // The delivery log: the 500, then the delivery.
      const log = (await (await fetch(`${server.url}/runs/${run.run_id}/webhook`)).json()) as {
        delivery_id: string;
        url: string;
        attempts: Array<{ attempt: number; outcome: string; status_code: number | null }>;
      };
      expect(log.delivery_id).toBe(run.run_id);
      expect(log.url).toBe(receiver.url);
      expect(log.attempts.map((a) => [a.attempt, a.outcome, a.status_code])).toEqual([
        [1, 'retry', 500],
        [2, 'delivered', 204],
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('streams values and updates over SSE and ends', async () => {
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
    expect(events).toContain('values');
    expect(events).toContain('updates');
  });

  it('ends a run whose tool fails with an "Error:" tool message and lets the model recover', async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'read a missing file' }] },
      config: scripted([{ tool_calls: [{ name: 'read_file', args: { file_path: '../../other-tenant/notes.txt' } }] }, { content: 'I cannot read that.' }]),
    })) as { messages: Array<{ type: string; content: string }> };
    const tool = values.messages.find((m) => m.type === 'tool')!;
    expect(tool.content).toMatch(/^Error: Path outside workspace/);
    expect(values.messages.at(-1)!.content).toBe('I cannot read that.');
  });

  it('deletes a thread with its runs, checkpoints and workspace', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'x' }] }, config: scripted(HELLO_TURNS) });
    const ws = path.join(dataDir, 'workspaces', 'default', thread.thread_id);
    const db = new Database(path.join(dataDir, 'checkpoints.sqlite'), { readonly: true });
    const count = () => (db.prepare('select count(*) as n from checkpoints where thread_id = ?').get(`default:${thread.thread_id}`) as { n: number }).n;
    try {
      expect(existsSync(ws)).toBe(true);
      expect(count()).toBeGreaterThan(0);
      await client.threads.delete(thread.thread_id);
      expect(existsSync(ws)).toBe(false);
      expect(count()).toBe(0);
      await expect(client.threads.get(thread.thread_id)).rejects.toThrow(/404|not found/i);
    } finally {
      db.close();
    }
  });
});
