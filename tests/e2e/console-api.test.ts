/**
 * The ops console's API end to end (issue 16), embedded and as a cluster (approval, orchestrator,
 * tool-runner and gateway as separate processes over NATS, BullMQ on Redis, MariaDB): a scripted
 * run stops for approval of a secret write; the tenant's key and an operator key find it in
 * `GET /approvals/pending`, another tenant does not; the run's timeline has its model call from the
 * event log (JetStream in the cluster); the operator sees the real queue's stats; the answer (a
 * resume) is reported on `GET /console/events` and empties the inbox.
 */
import { describe, expect, it } from 'vitest';
import { poll, scripted, useCluster, useEmbeddedServer } from './helpers.js';

const KEYS = { acme: 'console-acme', globex: 'console-globex', ops: 'console-ops' };
const ENV = { AGENTLOOP_API_KEYS: `${KEYS.acme}:acme,${KEYS.globex}:globex`, AGENTLOOP_ADMIN_KEYS: `${KEYS.ops}:ops`, ALLOW_SCRIPTED_MODEL: 'true' };

async function consoleJourney(baseUrl: string): Promise<void> {
  const call = async (path: string, key: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  const thread = (await call('/threads', KEYS.acme, {})).body as { thread_id: string };
  const run = (
    await call(`/threads/${thread.thread_id}/runs`, KEYS.acme, {
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: 'save the config' }] },
      config: scripted([{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/config.env', content: 'API_KEY=abc123' } }] }]),
    })
  ).body as { run_id: string; assistant_id: string };

  const pending = await poll(async () => {
    const { body } = await call('/approvals/pending', KEYS.acme);
    return body.approvals.length > 0 ? (body.approvals as Array<Record<string, unknown>>) : undefined;
  }, 60_000);
  expect(pending).toEqual([
    expect.objectContaining({
      kind: 'tool_approval',
      tenant_id: 'acme',
      thread_id: thread.thread_id,
      run_id: run.run_id,
      tool: 'write_file',
      args: { file_path: 'outputs/config.env', content: 'API_KEY=abc123' },
      risk_level: 'critical',
      rule: 'global:critical',
      review_config: expect.objectContaining({ allowed_decisions: expect.arrayContaining(['approve', 'reject']) }),
    }),
  ]);
  expect((await call('/approvals/pending', KEYS.globex)).body.approvals).toEqual([]);
  expect((await call('/approvals/pending', KEYS.ops)).body.approvals.map((a: { run_id: string }) => a.run_id)).toContain(run.run_id);
  expect((await call('/approvals/pending', 'wrong-key')).status).toBe(401);

  const timeline = (await call(`/runs/${run.run_id}/timeline`, KEYS.acme)).body;
  expect(timeline.entries.filter((e: { kind: string }) => e.kind === 'model_call')).toEqual([expect.objectContaining({ title: 'model call #1: write_file' })]);
  expect(timeline.pending_approvals).toHaveLength(1);
  expect((await call(`/runs/${run.run_id}/timeline`, KEYS.globex)).status).toBe(404);

  const stats = (await call('/queue/stats', KEYS.ops)).body;
  expect(stats.queue).toMatchObject({ name: 'runs', waiting: expect.any(Number), active: expect.any(Number), oldest_waiting_ms: expect.any(Number) });
  expect((await call('/queue/stats', KEYS.acme)).body).toMatchObject({ queue: null, tenant: { tenant_id: 'acme' } });

  // Follow the feed, then answer: the resume shows up as answered, and the inbox empties.
  const stop = new AbortController();
  const feed = await fetch(`${baseUrl}/console/events`, { headers: { 'x-api-key': KEYS.acme }, signal: stop.signal });
  const reader = feed.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const seen = async (what: string, ok: () => boolean) => {
    const deadline = Date.now() + 60_000;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${text}`);
      const { value, done } = await reader.read();
      if (done) throw new Error(`the feed ended before ${what}`);
      text += value;
    }
  };
  await seen('ready', () => text.includes('event: ready'));
  const resumed = (
    await call(`/threads/${thread.thread_id}/runs`, KEYS.acme, {
      assistant_id: run.assistant_id,
      command: { resume: { decision: 'approve', by: 'ops console', comment: 'dev key' } },
      config: scripted([{ content: 'Saved.' }]),
    })
  ).body as { run_id: string };
  await seen('the answer', () => text.includes(`"type":"approval_answered","tenant_id":"acme","thread_id":"${thread.thread_id}","run_id":"${resumed.run_id}"`));
  const ended = new RegExp(`"run_id":"${resumed.run_id}","thread_id":"[^"]+","assistant_id":"[^"]+","status":"success"`);
  await seen('the resumed run ending', () => ended.test(text));
  stop.abort();
  expect((await call('/approvals/pending', KEYS.acme)).body.approvals).toEqual([]);
  const after = (await call(`/runs/${resumed.run_id}/timeline`, KEYS.acme)).body;
  expect(after.entries.map((e: { title: string }) => e.title)).toEqual(expect.arrayContaining(['write_file: approved', 'write_file', 'ended: success']));
}

describe('ops console API (embedded)', () => {
  const server = useEmbeddedServer('agentloop-console-api-', ENV);

  it('finds the pending approval per tenant, shows the timeline and queue, and reports the answer live', async () => {
    await consoleJourney(server.url);
  }, 120_000);
});

describe('ops console API (cluster)', () => {
  const cluster = useCluster({ env: ENV });

  it('finds the pending approval per tenant, shows the timeline and queue, and reports the answer live', async () => {
    await consoleJourney(cluster().url);
  }, 180_000);
});
