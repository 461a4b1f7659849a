/**
 * Cluster mode end to end: nats-server (JetStream), redis-server and MariaDB
 * as real servers, and gateway, orchestrator and tool-runner each as its own
 * OS process talking over them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { freePort, startMariaDb, startNats, startRedis, type DevServer } from '@agentloop/devservers';
import { startService, type ServiceName, type ServiceProcess } from '@agentloop/agentloop-app';
import { verifyWebhookSignature } from '@agentloop/gateway';
import { HELLO_TURNS, poll, scripted, startWebhookReceiver } from './helpers.js';

const SECRET = 'cluster-webhook-secret';
const TOOL_TIMEOUT_MS = 10_000;

describe('cluster mode, end to end (separate processes over NATS, Redis, MariaDB)', () => {
  const servers: DevServer[] = [];
  const procs: ServiceProcess[] = [];
  const logs: string[] = [];
  let env: NodeJS.ProcessEnv;
  let client: Client;
  let workspaceRoot: string;

  const start = (name: ServiceName, instance = 1): ServiceProcess => {
    const p = startService(name, { env, instance, fromSource: true, onLine: (l) => logs.push(`[${name}#${instance}] ${l}`) });
    procs.push(p);
    return p;
  };
  /** Waits until a process has logged a line matching re (after `from` lines). */
  const waitLog = (re: RegExp, from = 0, timeoutMs = 60_000) => poll(async () => (logs.slice(from).some((l) => re.test(l)) ? true : undefined), timeoutMs, 100);

  beforeAll(async () => {
    const [nats, redis, mysql] = await Promise.all([startNats({ jetstream: true }), startRedis(), startMariaDb()]);
    servers.push(nats, redis, mysql);
    workspaceRoot = mkdtempSync(path.join(tmpdir(), 'agentloop-cluster-ws-'));
    const port = await freePort();
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NATS_URL: nats.url,
      REDIS_URL: redis.url,
      MYSQL_URL: mysql.url,
      WORKSPACE_ROOT: workspaceRoot,
      PORT: String(port),
      GRPC_PORT: String(await freePort()),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ALLOW_SCRIPTED_MODEL: 'true',
      TOOLS_ENABLE_DEBUG: 'true',
      TOOL_CALL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS),
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_BACKOFF_MS: '100',
      WEBHOOK_ALLOW: '127.0.0.1',
    };
    start('tool-runner', 1);
    start('approval', 1);
    start('orchestrator', 1);
    start('gateway', 1);
    client = new Client({ apiUrl: `http://127.0.0.1:${port}` });
    await poll(async () => ((await fetch(`http://127.0.0.1:${port}/ok`).catch(() => undefined))?.ok ? true : undefined), 90_000);
    await waitLog(/"service":"orchestrator".*orchestrator started/);
    await waitLog(/tool-runner serving/);
    await waitLog(/approval serving/);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill('SIGTERM')));
    await Promise.all(servers.map((s) => s.stop()));
    if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
  });

  it('runs the scripted hello flow through runs.wait', async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'write hello.txt and read it back' }] },
      config: scripted(HELLO_TURNS),
    })) as { messages: Array<{ type: string; content: string }> };
    expect(values.messages.at(-1)).toMatchObject({ type: 'ai', content: 'The file says: hello from the e2e test' });
    expect(readFileSync(path.join(workspaceRoot, 'default', thread.thread_id, 'outputs', 'hello.txt'), 'utf8')).toBe('hello from the e2e test');
  });

  it('delivers a background run webhook exactly once with status success', async () => {
    const receiver = await startWebhookReceiver({ failFirst: 1 });
    try {
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: 'hello' }] },
        config: scripted(HELLO_TURNS),
        webhook: receiver.url,
      });
      await receiver.waitFor(1, 60_000);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(receiver.deliveries).toHaveLength(1);
      const d = receiver.deliveries[0]!;
      expect(d.json).toMatchObject({ run_id: run.run_id, status: 'success' });
      expect(verifyWebhookSignature(SECRET, d.headers as Record<string, string>, d.body)).toBe(true);
      expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
    } finally {
      await receiver.close();
    }
  });

  it('ends a tool call with an "Error:" message when its tool-runner is killed, and another instance serves the next call', async () => {
    const thread = await client.threads.create();
    const mark = logs.length;
    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'sleep, then tell the time' }] },
      config: scripted([{ tool_calls: [{ name: 'debug_sleep', args: { ms: 60_000 } }] }, { tool_calls: [{ name: 'now', args: {} }] }, { content: 'done' }]),
    });
    // The first tool-runner has the debug_sleep call in hand: kill it hard. The call is sent as the
    // tools step starts, right after the model's step is checkpointed with it; a run merely
    // `running` may not have got that far yet on a loaded machine, and a call sent after the
    // replacement below is up may go to the replacement, which the kill then never touches.
    await poll(async () => {
      const state = await client.threads.getState(thread.thread_id);
      const messages = (state.values as { messages?: Array<{ type: string; tool_calls?: Array<{ name: string }> }> } | undefined)?.messages ?? [];
      return messages.some((m) => m.type === 'ai' && m.tool_calls?.some((c) => c.name === 'debug_sleep')) ? true : undefined;
    });
    const sleepStarted = Date.now();
    await new Promise((r) => setTimeout(r, 500));
    // The replacement is up before the kill, so the next call never finds the queue group empty
    // (how fast a fresh process starts is not what this test is about).
    const replacementFrom = logs.length;
    start('tool-runner', 2);
    await waitLog(/tool-runner serving/, replacementFrom);
    const first = procs.find((p) => p.name === 'tool-runner' && p.instance === 1)!;
    first.child.kill('SIGKILL');
    await first.exited;
    // The call was still in #1's hands when it died (its timeout had not passed).
    expect(Date.now() - sleepStarted).toBeLessThan(TOOL_TIMEOUT_MS);

    const values = (await client.runs.join(thread.thread_id, run.run_id)) as { messages: Array<{ type: string; name?: string; content: string }> };
    const toolMsgs = values.messages.filter((m) => m.type === 'tool');
    expect(toolMsgs[0]!.name).toBe('debug_sleep');
    expect(toolMsgs[0]!.content).toMatch(new RegExp(`^Error: Tool debug_sleep did not answer within ${TOOL_TIMEOUT_MS} ms`));
    expect(toolMsgs[1]!.name).toBe('now');
    expect(toolMsgs[1]!.content).not.toMatch(/^Error:/);
    expect(values.messages.at(-1)!.content).toBe('done');
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
    // Only tool-runner #2 was alive for the `now` call, so a non-error result means it served it.
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(logs.slice(mark).some((l) => l.startsWith('[tool-runner#2]'))).toBe(true);
  });
});
