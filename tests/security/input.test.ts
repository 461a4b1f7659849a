/**
 * Attack class 6 — bad input (issue 18: JSON nested 10,000 deep gave 500 from a RangeError in the
 * store; `on_disconnect: "cancel"` was accepted and ignored; a resume with nothing pending got a
 * silent 200) — and class 9, more of a hostile tenant's input: oversized headers and bodies,
 * metadata bombs, garbage Last-Event-ID, look-alike API keys, replayed resumes, id collisions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  ATTACK_ENV,
  KEY_A,
  KEY_B,
  OK_BUDGET_MS,
  RSS_CEILING_MB,
  TENANT_A,
  TENANT_B,
  call,
  newThread,
  poll,
  rawRequest,
  runWait,
  scripted,
  sleep,
  spawnServer,
  text,
  threadStatus,
  toolMessages,
  underAttack,
  userInput,
  warmUp,
  type ProbeStats,
  type ServerChild,
  type Values,
} from './harness.js';

let server: ServerChild;

beforeAll(async () => {
  server = await spawnServer({ env: ATTACK_ENV });
  await warmUp(server.url, KEY_A);
}, 120_000);

afterAll(async () => {
  await server?.stop(5_000);
  server?.cleanup();
});

function expectResponsive(probe: ProbeStats, rss = false): void {
  expect.soft(probe.failures, `failed /ok probes (of ${probe.samples})`).toBe(0);
  expect.soft(probe.worstMs, `worst /ok latency over ${probe.samples} probes`).toBeLessThan(OK_BUDGET_MS);
  if (rss) expect.soft(probe.peakRssMb[server.pid] ?? 0, 'peak RSS of the server (MB)').toBeLessThan(RSS_CEILING_MB);
}

const deepObject = (depth: number) => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) as Record<string, unknown>;
const deepArrayText = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('JSON nested 10,000 deep', () => {
  let thread: string;
  beforeAll(async () => {
    thread = await newThread(server.url, KEY_A);
  });

  it.each([
    ['POST /threads metadata', 'POST', () => '/threads', (deep: string) => `{"metadata":${deep}}`],
    ['PATCH /threads/{id} metadata', 'PATCH', () => `/threads/${thread}`, (deep: string) => `{"metadata":${deep}}`],
    ['POST /threads/search metadata', 'POST', () => '/threads/search', (deep: string) => `{"metadata":${deep}}`],
    [
      'POST /threads/{id}/runs input',
      'POST',
      () => `/threads/${thread}/runs`,
      (deep: string) => `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"x"}],"extra":${deep}}}`,
    ],
    [
      'POST /threads/{id}/runs/wait config',
      'POST',
      () => `/threads/${thread}/runs/wait`,
      (deep: string) => `{"assistant_id":"agent","input":{"messages":[]},"config":{"configurable":{"x":${deep}}}}`,
    ],
    ['POST /runs/wait metadata', 'POST', () => '/runs/wait', (deep: string) => `{"assistant_id":"agent","input":{"messages":[]},"metadata":{"x":${deep}}}`],
  ])('answers 400 naming the depth limit to %s, with /ok under 100 ms and RSS under 500 MB', async (_name, method, url, body) => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const { result, probe } = await underAttack(server.url, [server.pid], () =>
      call(server.url, KEY_A, method, url(), undefined, { raw: body(deep), headers: { 'content-type': 'application/json' } }),
    );
    expect.soft(result.status, result.text.slice(0, 300)).toBe(400);
    expect.soft(result.text).toMatch(/depth|nest/i);
    expectResponsive(probe, true);
  });

  it('answers 400 to arrays nested 100,000 deep, with /ok under 100 ms and RSS under 500 MB', async () => {
    const { result, probe } = await underAttack(server.url, [server.pid], () =>
      call(server.url, KEY_A, 'POST', '/threads', undefined, {
        raw: `{"metadata":{"x":${deepArrayText(100_000)}}}`,
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect.soft(result.status, result.text.slice(0, 300)).toBe(400);
    expect.soft(result.text).toMatch(/depth|nest/i);
    expectResponsive(probe, true);
  });

  it('still accepts ordinary nesting (metadata 20 deep)', async () => {
    const res = await call(server.url, KEY_A, 'POST', '/threads', { metadata: deepObject(20) });
    expect(res.status, res.text).toBe(200);
  });

  it('answers 400 to scripted tool-call arguments nested 10,000 deep', async () => {
    const t = await newThread(server.url, KEY_A);
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const { result, probe } = await underAttack(server.url, [server.pid], () =>
      call(server.url, KEY_A, 'POST', `/threads/${t}/runs/wait`, undefined, {
        raw: `{"assistant_id":"agent","input":${JSON.stringify(userInput())},"config":{"configurable":{"model":{"provider":"scripted","turns":[{"tool_calls":[{"name":"now","args":${deep}}]},{"content":"x"}]}}}}`,
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect.soft(result.status, result.text.slice(0, 300)).toBe(400);
    expectResponsive(probe, true);
  });
});

describe('on_disconnect', () => {
  const slowRun = (onDisconnect: 'cancel' | 'continue') => ({
    assistant_id: 'agent',
    input: userInput('slow'),
    on_disconnect: onDisconnect,
    stream_mode: ['values'],
    config: scripted([
      { delay_ms: 2_500, tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/after.txt', content: 'ran on' } }] },
      { content: 'late' },
    ]),
  });

  /** Starts a streamed run, reads its first event, then drops the connection; returns the run id. */
  async function streamAndDrop(thread: string, body: Record<string, unknown>): Promise<string> {
    const ac = new AbortController();
    const res = await fetch(`${server.url}/threads/${thread}/runs/stream`, {
      method: 'POST',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    const runId = /\/runs\/([0-9a-f-]{36})/.exec(res.headers.get('content-location') ?? '')?.[1];
    expect(runId).toBeDefined();
    const reader = res.body!.getReader();
    await reader.read(); // the metadata event
    ac.abort();
    await reader.cancel().catch(() => undefined);
    return runId!;
  }

  it('cancels a streamed run whose client disconnects with on_disconnect "cancel": status interrupted, nothing after', async () => {
    const thread = await newThread(server.url, KEY_A);
    const runId = await streamAndDrop(thread, slowRun('cancel'));
    const status = await poll(async () => {
      const r = await call(server.url, KEY_A, 'GET', `/threads/${thread}/runs/${runId}`);
      const s = (r.json as { status: string }).status;
      return s === 'pending' || s === 'running' ? undefined : s;
    }, 6_000);
    expect(status).toBe('interrupted');
    await sleep(3_000); // past the scripted delay: the cancelled run must not have gone on
    expect(existsSync(path.join(server.workspaceRoot, TENANT_A, thread, 'outputs', 'after.txt'))).toBe(false);
  });

  it('lets the run finish when the client disconnects with on_disconnect "continue" (the control case)', async () => {
    const thread = await newThread(server.url, KEY_A);
    const runId = await streamAndDrop(thread, slowRun('continue'));
    const status = await poll(async () => {
      const r = await call(server.url, KEY_A, 'GET', `/threads/${thread}/runs/${runId}`);
      const s = (r.json as { status: string }).status;
      return s === 'pending' || s === 'running' ? undefined : s;
    }, 10_000);
    expect(status).toBe('success');
  });
});

describe('resumes with nothing to resume', () => {
  const resume = (thread: string, key = KEY_A) =>
    call(server.url, key, 'POST', `/threads/${thread}/runs/wait`, {
      assistant_id: 'agent',
      command: { resume: { decision: 'approve', by: 'x' } },
      config: scripted([{ content: 'resumed' }]),
    });

  it('answers 409 to a resume on a new thread', async () => {
    const res = await resume(await newThread(server.url, KEY_A));
    expect(res.status, res.text).toBe(409);
    expect(res.text).toMatch(/interrupt|pending|nothing to resume/i);
  });

  it('answers 409 to a resume on a thread whose run finished without an interrupt', async () => {
    const thread = await newThread(server.url, KEY_A);
    await runWait(server.url, KEY_A, thread, [{ content: 'done' }]);
    const res = await resume(thread);
    expect(res.status, res.text).toBe(409);
  });

  it('answers 409 to a replayed approval (the second resume of one interrupt) and runs the call once', async () => {
    const thread = await newThread(server.url, KEY_A);
    await runWait(server.url, KEY_A, thread, [
      { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/once.txt', content: 'password=x1 ', append: true } }] },
    ]);
    expect(await threadStatus(server.url, KEY_A, thread)).toBe('interrupted');
    expect((await resume(thread)).status).toBe(200);
    const replay = await resume(thread);
    expect(replay.status, replay.text).toBe(409);
    expect(readFileSync(path.join(server.workspaceRoot, TENANT_A, thread, 'outputs', 'once.txt'), 'utf8')).toBe('password=x1 ');
  });
});

describe('headers and bodies', () => {
  it('answers 431 to a 100 KB header and keeps /ok under 100 ms', async () => {
    const { result, probe } = await underAttack(server.url, [server.pid], () =>
      rawRequest(server.url, KEY_A, 'GET', '/threads', { headers: { 'x-padding': 'a'.repeat(100_000) } }),
    );
    expect([431, -1]).toContain(result.status);
    expectResponsive(probe);
  });

  it('answers 413 to a body over the limit (11 MB) and keeps /ok under 100 ms', async () => {
    const { result, probe } = await underAttack(server.url, [server.pid], () =>
      call(server.url, KEY_A, 'POST', '/threads', undefined, {
        raw: `{"metadata":{"x":"${'a'.repeat(11 * 1024 * 1024)}"}}`,
        headers: { 'content-type': 'application/json' },
      }).catch((err: Error) => ({ status: -1, text: err.message })),
    );
    expect([413, -1]).toContain(result.status);
    expectResponsive(probe);
  });

  it('answers a metadata bomb (100,000 keys) without a 5xx and keeps /ok under 100 ms', async () => {
    const metadata: Record<string, string> = {};
    for (let i = 0; i < 100_000; i++) metadata[`k${i}`] = 'v';
    const { result, probe } = await underAttack(server.url, [server.pid], async () => {
      const created = await call(server.url, KEY_A, 'POST', '/threads', { metadata });
      const searched = await call(server.url, KEY_A, 'POST', '/threads/search', { metadata, limit: 10 });
      return [created, searched];
    });
    for (const r of result) expect(r.status, r.text.slice(0, 200)).toBeLessThan(500);
    expectResponsive(probe, true);
  });

  // ("-1" is valid: useStream sends it to replay a run from its first event.)
  it.each(['abc', '-2', '1e3', '9'.repeat(40), '1, 2', '0x10', '1.5', '½'])('answers 4xx to Last-Event-ID %j, not 5xx', async (id) => {
    const thread = await newThread(server.url, KEY_A);
    await runWait(server.url, KEY_A, thread, [{ content: 'x' }]);
    const runs = await call(server.url, KEY_A, 'GET', `/threads/${thread}/runs`);
    const runId = (runs.json as Array<{ run_id: string }>)[0]!.run_id;
    const res = await rawRequest(server.url, KEY_A, 'GET', `/threads/${thread}/runs/${runId}/stream`, {
      headers: { 'last-event-id': Buffer.from(id, 'utf8').toString('latin1') },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });
});

describe('SSE join floods', () => {
  it('serves /ok under 100 ms while 50 SSE clients join a running run and drop, and the run still succeeds', async () => {
    const thread = await newThread(server.url, KEY_A);
    const created = await call(server.url, KEY_A, 'POST', `/threads/${thread}/runs`, {
      assistant_id: 'agent',
      input: userInput('slow'),
      config: scripted([{ delay_ms: 2_000, content: 'late' }]),
    });
    const runId = (created.json as { run_id: string }).run_id;
    const { probe } = await underAttack(server.url, [server.pid], async () => {
      const controllers = Array.from({ length: 50 }, () => new AbortController());
      const joins = controllers.map((ac) =>
        fetch(`${server.url}/threads/${thread}/runs/${runId}/stream`, { headers: { 'x-api-key': KEY_A, 'last-event-id': '0' }, signal: ac.signal })
          .then((res) => res.body?.getReader().read())
          .catch(() => undefined),
      );
      await sleep(500);
      for (const ac of controllers) ac.abort();
      await Promise.all(joins);
      await sleep(200);
    });
    expect(probe.worstMs, `worst /ok over ${probe.samples} probes`).toBeLessThan(OK_BUDGET_MS);
    const join = await call(server.url, KEY_A, 'GET', `/threads/${thread}/runs/${runId}/join`, undefined, { timeoutMs: 10_000 });
    expect(join.status).toBe(200);
    expect((await call(server.url, KEY_A, 'GET', `/threads/${thread}/runs/${runId}`)).json).toMatchObject({ status: 'success' });
  });
});

describe('look-alike API keys', () => {
  const variants: Array<[string, string]> = [
    ['upper case', KEY_A.toUpperCase()],
    ['a Cyrillic а for the Latin a', KEY_A.replace('a', '\u0430')],
    ['fullwidth letters', [...KEY_A].map((c) => (/[a-z]/.test(c) ? String.fromCharCode(c.charCodeAt(0) + 0xfee0) : c)).join('')],
    ['a trailing zero-width space', `${KEY_A}\u200b`],
    ['a trailing NBSP', `${KEY_A}\u00a0`],
    ['a prefix of the key', KEY_A.slice(0, -1)],
    ['the key plus one character', `${KEY_A}0`],
    ['the tenant name', TENANT_A],
    ['both keys joined', `${KEY_A},${KEY_B}`],
  ];

  it.each(variants)('answers 401 to the key with %s (x-api-key and Bearer)', async (_name, key) => {
    // Header bytes as UTF-8 (a client sending the look-alike as typed).
    const raw = Buffer.from(key, 'utf8').toString('latin1');
    const x = await rawRequest(server.url, '', 'GET', '/threads/search', { headers: { 'x-api-key': raw } });
    const bearer = await rawRequest(server.url, '', 'GET', '/threads/search', { headers: { authorization: `Bearer ${raw}` } });
    expect([x.status, bearer.status]).toEqual([401, 401]);
    expect(x.text + bearer.text).not.toContain(KEY_A);
  });
});

describe('id collisions', () => {
  it("keeps tenant B out of tenant A's files when B creates a thread with A's thread id", async () => {
    const thread = await newThread(server.url, KEY_A);
    await runWait(server.url, KEY_A, thread, [
      { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/a-only.txt', content: 'acme data' } }] },
      { content: 'ok' },
    ]);
    const taken = await call(server.url, KEY_B, 'POST', '/threads', { thread_id: thread, metadata: { owner: 'globex' } });
    expect(taken.status).toBe(200);
    const res = await runWait(server.url, KEY_B, thread, [
      {
        tool_calls: [
          { name: 'read_file', args: { file_path: 'outputs/a-only.txt' } },
          { name: 'read_file', args: { file_path: `../../${TENANT_A}/${thread}/outputs/a-only.txt` } },
        ],
      },
      { content: 'ok' },
    ]);
    const tools = toolMessages(res.json as Values).map(text);
    expect(tools).toHaveLength(2);
    for (const t of tools) {
      expect(t).toMatch(/^Error: /);
      expect(t).not.toContain('acme data');
    }
    expect((await call(server.url, KEY_A, 'GET', `/threads/${thread}`)).json).not.toMatchObject({ metadata: { owner: 'globex' } });
    expect(existsSync(path.join(server.workspaceRoot, TENANT_B, thread, 'outputs', 'a-only.txt'))).toBe(false);
  });
});
