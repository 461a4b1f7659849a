/**
 * The ops console's API (issue 16): runs across threads, pending approvals, a run's timeline,
 * queue stats and the live feed — each scoped by the API key (a tenant key: its tenant; an
 * operator key: every tenant), 401 without a key. Real gateway on the embedded adapters, with the
 * fake orchestrator stopping runs at a tool approval (acme) or a question (globex).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunJob } from '@agentloop/proto';
import { startTestGateway, until, type TestGateway } from '../testing/index.js';

const KEYS = { acme: 'key-acme', globex: 'key-globex', ops: 'key-ops' };
const H = (key: string) => ({ 'x-api-key': key });

/** What the fake orchestrator stops at: acme's runs at a secret write, globex's at a question. */
function interruptFor(job: RunJob) {
  if (job.tenantId === 'acme') {
    return {
      type: 'tool_approval',
      tool_call_id: 'call-1',
      tool: 'write_file',
      args: { file_path: 'outputs/config.env', content: 'API_KEY=abc123' },
      reason: 'Sensitive data in the arguments',
      risk_level: 'critical',
      rule: 'global:critical',
      options: ['approve', 'reject'],
      review_configs: [{ action_name: 'write_file', allowed_decisions: ['approve', 'edit', 'reject'] }],
    };
  }
  return { type: 'user_input_request', tool_call_id: 'call-q', question: 'Which city?', context: '', default: 'Beijing', required: true };
}

let gw: TestGateway;
const ids: Record<'acme' | 'globex', { thread: string; run: string }> = { acme: { thread: '', run: '' }, globex: { thread: '', run: '' } };

async function get(path: string, key: string) {
  const res = await gw.app.inject({ method: 'GET', url: path, headers: H(key) });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> & { detail?: string } };
}

async function startInterruptedRun(tenant: 'acme' | 'globex') {
  const key = KEYS[tenant];
  const thread = (await gw.app.inject({ method: 'POST', url: '/threads', headers: H(key), payload: {} })).json() as { thread_id: string };
  const run = (
    await gw.app.inject({
      method: 'POST',
      url: `/threads/${thread.thread_id}/runs`,
      headers: H(key),
      payload: { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'go' }] } },
    })
  ).json() as { run_id: string };
  ids[tenant] = { thread: thread.thread_id, run: run.run_id };
  await until(
    'the thread to wait for a human',
    () => gw.store.getThread(tenant, thread.thread_id),
    (t) => t?.status === 'interrupted',
  );
}

beforeAll(async () => {
  gw = await startTestGateway({
    env: { AGENTLOOP_API_KEYS: `${KEYS.acme}:acme,${KEYS.globex}:globex`, AGENTLOOP_ADMIN_KEYS: `${KEYS.ops}:ops` },
    orchestrator: { interrupt: interruptFor },
  });
  await startInterruptedRun('acme');
  await startInterruptedRun('globex');
});
afterAll(async () => {
  await gw?.close();
});

describe('console API: authentication', () => {
  it.each(['/console/session', '/runs', '/approvals/pending', '/queue/stats', '/console/events', '/runs/00000000-0000-4000-8000-000000000000/timeline'])(
    '%s answers 401 without a key',
    async (path) => {
      const res = await gw.app.inject({ method: 'GET', url: path });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ detail: expect.stringMatching(/Missing API key/) });
    },
  );

  it('serves the console page and its allow-listed modules without a key, and nothing else under it', async () => {
    const page = await gw.app.inject({ method: 'GET', url: '/console' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('"preact": "/console/vendor/preact.js"');
    // The import map is the page's only inline script, allowed by its hash.
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'/);
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    const preact = await gw.app.inject({ method: 'GET', url: '/console/vendor/preact.js' });
    expect(preact.statusCode).toBe(200);
    expect(preact.body).toMatch(/export\s*\{/);
    const main = await gw.app.inject({ method: 'GET', url: '/console/app/main.js' });
    expect(main.body).toContain("from './inbox.js'");
    for (const url of ['/console/vendor/..%2F..%2Fpackage.json', '/console/vendor/react.js', '/console/app/..%2Fsrc%2Fapp.ts', '/console/app/index.html']) {
      expect((await gw.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });
});

describe('GET /console/session', () => {
  it("names the key's tenant and whether it is an operator key", async () => {
    expect((await get('/console/session', KEYS.acme)).body).toEqual({ tenant_id: 'acme', admin: false });
    expect((await get('/console/session', KEYS.ops)).body).toEqual({ tenant_id: 'ops', admin: true });
  });
});

describe('GET /approvals/pending', () => {
  it("lists a tenant key's own pending tool approval with its call, review config and run", async () => {
    const { status, body } = await get('/approvals/pending', KEYS.acme);
    expect(status).toBe(200);
    expect(body.approvals).toEqual([
      expect.objectContaining({
        kind: 'tool_approval',
        tenant_id: 'acme',
        thread_id: ids.acme.thread,
        run_id: ids.acme.run,
        assistant_id: expect.any(String),
        tool_call_id: 'call-1',
        tool: 'write_file',
        args: { file_path: 'outputs/config.env', content: 'API_KEY=abc123' },
        risk_level: 'critical',
        rule: 'global:critical',
        review_config: { action_name: 'write_file', allowed_decisions: ['approve', 'edit', 'reject'] },
        requested_at: expect.any(String),
      }),
    ]);
  });

  it("never shows tenant B tenant A's approvals; B sees its own question", async () => {
    const { body } = await get('/approvals/pending', KEYS.globex);
    expect(body.approvals).toEqual([
      expect.objectContaining({ kind: 'question', tenant_id: 'globex', question: 'Which city?', default: 'Beijing', run_id: ids.globex.run }),
    ]);
    expect(JSON.stringify(body)).not.toContain(ids.acme.thread);
  });

  it('shows an operator key every tenant, or the one it names; a tenant key may not name another', async () => {
    const all = await get('/approvals/pending', KEYS.ops);
    expect((all.body.approvals as Array<{ tenant_id: string }>).map((a) => a.tenant_id).sort()).toEqual(['acme', 'globex']);
    const one = await get('/approvals/pending?tenant_id=globex', KEYS.ops);
    expect((one.body.approvals as Array<{ tenant_id: string }>).map((a) => a.tenant_id)).toEqual(['globex']);
    const denied = await get('/approvals/pending?tenant_id=globex', KEYS.acme);
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatch(/query\.tenant_id/);
    const bad = await get('/approvals/pending?tenant_id=a%20b', KEYS.ops);
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('tenant_id');
  });
});

describe('GET /runs and GET /runs/{run_id}/timeline', () => {
  it("lists a tenant's runs across threads with tenant, assistant and duration, and only its own", async () => {
    const a = await get('/runs', KEYS.acme);
    expect(a.body.runs).toEqual([
      expect.objectContaining({
        run_id: ids.acme.run,
        tenant_id: 'acme',
        assistant_id: expect.any(String),
        status: 'success',
        duration_ms: expect.any(Number),
      }),
    ]);
    const all = await get('/runs', KEYS.ops);
    expect((all.body.runs as Array<{ run_id: string }>).map((r) => r.run_id).sort()).toEqual([ids.acme.run, ids.globex.run].sort());
    expect((await get('/runs?status=running', KEYS.ops)).body.runs).toEqual([]);
    expect((await get('/runs?status=nope', KEYS.ops)).status).toBe(422);
  });

  it("builds a run's timeline from its record and event log, with what it waits for", async () => {
    const { status, body } = await get(`/runs/${ids.acme.run}/timeline`, KEYS.acme);
    expect(status).toBe(200);
    const entries = body.entries as Array<{ kind: string; title: string }>;
    expect(entries.filter((e) => e.kind === 'run').map((e) => e.title)).toEqual(['created', 'started', 'ended: success']);
    expect(entries.filter((e) => e.kind === 'model_call')).toEqual([
      expect.objectContaining({ title: 'model call #1', detail: expect.objectContaining({ content: 'echo: go' }) }),
    ]);
    expect(body.pending_approvals).toEqual([expect.objectContaining({ tool: 'write_file' })]);
    expect(body.event_log_available).toBe(true);
  });

  it("answers 404 for another tenant's run, and shows it to an operator key", async () => {
    expect((await get(`/runs/${ids.acme.run}/timeline`, KEYS.globex)).status).toBe(404);
    expect((await get(`/runs/${ids.acme.run}/timeline`, KEYS.ops)).body.run).toMatchObject({ tenant_id: 'acme' });
  });
});

describe('GET /queue/stats', () => {
  it('shows a tenant key its own backlog only, and an operator key the shared queue', async () => {
    const tenant = await get('/queue/stats', KEYS.acme);
    expect(tenant.body).toEqual({ queue: null, tenant: { tenant_id: 'acme', active_runs: 0, oldest_pending_ms: 0 } });
    const ops = await get('/queue/stats', KEYS.ops);
    expect(ops.body).toEqual({ queue: { name: 'runs', waiting: 0, delayed: 0, active: 0, failed: 0, oldest_waiting_ms: 0 }, tenant: null });
  });
});

describe('GET /console/events and answering through the resume', () => {
  it('streams a tenant its own run and approval changes only; a resume empties its inbox', async () => {
    const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const stop = new AbortController();
    const res = await fetch(`${address}/console/events`, { headers: H(KEYS.acme), signal: stop.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const seen = async (what: string, ok: (t: string) => boolean) => {
      const deadline = Date.now() + 20_000;
      while (!ok(text)) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got: ${text}`);
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${what}`);
        text += value;
      }
    };
    await seen('ready', (t) => t.includes('event: ready'));

    // globex's new run first, then acme's answer: acme's stream must carry the second and not the first.
    await gw.app.inject({
      method: 'POST',
      url: `/threads/${ids.globex.thread}/runs`,
      headers: H(KEYS.globex),
      payload: { assistant_id: 'agent', command: { resume: 'Shanghai' } },
    });
    await until(
      'globex answered',
      () => gw.store.getThread('globex', ids.globex.thread),
      (t) => t?.status === 'idle',
    );
    const answer = await gw.app.inject({
      method: 'POST',
      url: `/threads/${ids.acme.thread}/runs`,
      headers: H(KEYS.acme),
      payload: { assistant_id: 'agent', command: { resume: { decision: 'approve', by: 'ops console', comment: 'dev key' } } },
    });
    const resumed = answer.json() as { run_id: string };
    await seen('the resume ending', (t) => new RegExp(`"run_id":"${resumed.run_id}","thread_id":"[^"]+","assistant_id":"[^"]+","status":"success"`).test(t));
    expect(text).toContain('event: approval_answered');
    expect(text).not.toContain('globex');
    stop.abort();
    expect((await get('/approvals/pending', KEYS.acme)).body.approvals).toEqual([]);
  });
});
