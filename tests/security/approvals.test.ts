/**
 * Attack classes 2 and 3 — approval bypasses and identity forgery (issue 18).
 *
 * Bypasses: two tool calls sharing one id (the harmless call's "allow" used to overwrite the
 * secret write's verdict), an absolute or otherwise spelled path into uploads/, a secret past 64 KB
 * of padding, a secret split across two appends, and secrets spelled with invisible or fullwidth
 * characters or under names the rules did not know. Each must stop the run for a human (thread
 * `interrupted`, `__interrupt__` in the values) or be refused — never a silent write.
 *
 * Forgery: the audit trail records the authenticated tenant and key id of a resume beside the
 * label the client typed, and another tenant cannot resume (or see) the interrupted thread.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  ATTACK_ENV,
  KEY_A,
  KEY_B,
  LARGE_STATE_OK_BUDGET_MS,
  OK_BUDGET_MS,
  TENANT_A,
  TENANT_B,
  call,
  keyId,
  newThread,
  runWait,
  spawnServer,
  text,
  threadStatus,
  toolMessages,
  underAttack,
  warmUp,
  type Answer,
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

/** Tenant A's workspace of a thread (real path). */
const wsOf = (thread: string) => path.join(server.workspaceRoot, TENANT_A, thread);

interface Outcome {
  answer: Answer;
  values: Values;
  /** The thread is `interrupted` and the values carry `__interrupt__`. */
  interrupted: boolean;
  status: string;
  tools: string[];
}

async function attempt(thread: string, turns: unknown[], key = KEY_A): Promise<Outcome> {
  const answer = await runWait(server.url, key, thread, turns);
  const values = (answer.json ?? {}) as Values;
  const status = await threadStatus(server.url, key, thread);
  return {
    answer,
    values,
    interrupted: status === 'interrupted' && Array.isArray(values.__interrupt__) && values.__interrupt__.length > 0,
    status,
    tools: toolMessages(values).map(text),
  };
}

const describeOutcome = (o: Outcome) =>
  `thread ${o.status}, HTTP ${o.answer.status}, tools ${JSON.stringify(o.tools)}, interrupt ${JSON.stringify(o.values.__interrupt__?.map((i) => i.value.reason))}`;

/** Uploads one text file to tenant A's thread; returns its workspace-relative path. */
async function upload(thread: string, name: string, content: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([content], { type: 'text/plain' }), name);
  const res = await call(server.url, KEY_A, 'POST', `/threads/${thread}/files`, undefined, { raw: form });
  expect(res.status, res.text).toBe(201);
  return (res.json as { files: Array<{ path: string }> }).files[0]!.path;
}

describe('two tool calls sharing one tool-call id', () => {
  it.each([
    ['the secret write first', 0],
    ['the harmless call first', 1],
  ])('never runs a secret-carrying write_file silently when a harmless call shares its id (%s)', async (_name, order) => {
    const thread = await newThread(server.url, KEY_A);
    const secret = { name: 'write_file', id: 'call_dup', args: { file_path: 'outputs/creds.txt', content: 'password=hunter2' } };
    const harmless = { name: 'now', id: 'call_dup', args: {} };
    const calls = order === 0 ? [secret, harmless] : [harmless, secret];
    const o = await attempt(thread, [{ tool_calls: calls }, { content: 'done' }]);
    expect(existsSync(path.join(wsOf(thread), 'outputs', 'creds.txt')), `creds.txt was written: ${describeOutcome(o)}`).toBe(false);
    // Either the run stopped for a human, or the calls were refused with an error naming the id.
    const refused = o.tools.length > 0 && o.tools.every((t) => /^Error: .*(id|duplicate)/i.test(t));
    const failed = o.values.__error__ !== undefined && /id|duplicate/i.test(JSON.stringify(o.values.__error__));
    expect(o.interrupted || refused || failed, describeOutcome(o)).toBe(true);
  });
});

describe('writes into uploads/ by any spelling', () => {
  let thread: string;
  let upload1: string;

  beforeAll(async () => {
    thread = await newThread(server.url, KEY_A);
    upload1 = await upload(thread, 'notes.txt', 'the user wrote this');
    expect(upload1).toBe('uploads/notes.txt');
  });

  /** Tries one write on the shared thread; after an interrupt the thread is resumed with reject so the next spelling can run. */
  async function tryWrite(filePath: string, extra: Record<string, unknown> = {}): Promise<Outcome> {
    // The fixture is reset before each spelling, so one silent overwrite fails only its own test.
    writeFileSync(path.join(wsOf(thread), 'uploads', 'notes.txt'), 'the user wrote this');
    const o = await attempt(thread, [
      { tool_calls: [{ name: 'write_file', args: { file_path: filePath, content: 'overwritten by the agent', ...extra } }] },
      { content: 'done' },
    ]);
    if (o.status === 'interrupted') {
      // Leave the thread usable for the next spelling (and prove reject does not write either).
      const res = await call(server.url, KEY_A, 'POST', `/threads/${thread}/runs/wait`, {
        assistant_id: 'agent',
        command: { resume: 'reject' },
        config: { configurable: { model: { provider: 'scripted', turns: [{ content: 'ok' }] } } },
      });
      expect(res.status).toBe(200);
    }
    return o;
  }

  const uploadContent = () => readFileSync(path.join(wsOf(thread), 'uploads', 'notes.txt'), 'utf8');

  it('interrupts a relative write to uploads/notes.txt (the control case)', async () => {
    const o = await tryWrite('uploads/notes.txt');
    expect(o.interrupted, describeOutcome(o)).toBe(true);
    expect(uploadContent()).toBe('the user wrote this');
  });

  it('interrupts an absolute write to <workspace>/uploads/notes.txt like the relative one', async () => {
    const o = await tryWrite(path.join(wsOf(thread), 'uploads', 'notes.txt'));
    expect(uploadContent(), describeOutcome(o)).toBe('the user wrote this');
    expect(o.interrupted, describeOutcome(o)).toBe(true);
  });

  it('interrupts an absolute append to <DATA_DIR>/workspaces/<tenant>/<thread>/uploads/notes.txt (the logical, not real, root)', async () => {
    const o = await tryWrite(path.join(server.dataDir, 'workspaces', TENANT_A, thread, 'uploads', 'notes.txt'), { append: true });
    expect(uploadContent(), describeOutcome(o)).toBe('the user wrote this');
    expect(o.interrupted, describeOutcome(o)).toBe(true);
  });

  it.each([
    './uploads/notes.txt',
    'outputs/../uploads/notes.txt',
    'uploads//notes.txt',
    'uploads/./notes.txt',
    'temp/../uploads/notes.txt',
    'uploads\\notes.txt',
  ])('never overwrites the upload silently through %s', async (spelling) => {
    const o = await tryWrite(spelling);
    expect(uploadContent(), describeOutcome(o)).toBe('the user wrote this');
    const refused = o.tools.length === 1 && o.tools[0]!.startsWith('Error: ');
    expect(o.interrupted || refused, describeOutcome(o)).toBe(true);
  });

  it('interrupts a write through a link in outputs/ that resolves into uploads/', async () => {
    mkdirSync(path.join(wsOf(thread), 'outputs'), { recursive: true });
    symlinkSync(path.join(wsOf(thread), 'uploads'), path.join(wsOf(thread), 'outputs', 'up-link'));
    const o = await tryWrite('outputs/up-link/notes.txt');
    expect(uploadContent(), describeOutcome(o)).toBe('the user wrote this');
    const refused = o.tools.length === 1 && o.tools[0]!.startsWith('Error: ');
    expect(o.interrupted || refused, describeOutcome(o)).toBe(true);
  });
});

describe('secrets the scan must see', () => {
  it('interrupts a secret after 64 KB of padding', async () => {
    const thread = await newThread(server.url, KEY_A);
    const content = `${'x'.repeat(64 * 1024 + 10)}\npassword=hunter2\n`;
    const o = await attempt(thread, [{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/padded.txt', content } }] }, { content: 'done' }]);
    expect(existsSync(path.join(wsOf(thread), 'outputs', 'padded.txt')), describeOutcome(o)).toBe(false);
    expect(o.interrupted, describeOutcome(o)).toBe(true);
  });

  it('interrupts a secret split across two appends, on the second', async () => {
    const thread = await newThread(server.url, KEY_A);
    const o = await attempt(thread, [
      { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/split.env', content: 'notes\npass' } }] },
      { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/split.env', content: 'word=hunter2\n', append: true } }] },
      { content: 'done' },
    ]);
    expect(readFileSync(path.join(wsOf(thread), 'outputs', 'split.env'), 'utf8'), describeOutcome(o)).toBe('notes\npass');
    expect(o.interrupted, describeOutcome(o)).toBe(true);
    expect(o.values.__interrupt__?.[0]?.value).toMatchObject({ type: 'tool_approval', tool: 'write_file' });
  });

  it.each([
    ['a zero-width space', 'pass\u200bword=hunter2'],
    ['a soft hyphen', 'pass\u00adword=hunter2'],
    ['a word joiner', 'api\u2060_key=sk-live-1234567890'],
    ['fullwidth letters', 'ｐａｓｓｗｏｒｄ＝hunter2'],
    ['passwd=', 'passwd=hunter2'],
    ['API KEY= with a space', 'API KEY=abc123def456'],
    ['AWS_SECRET_ACCESS_KEY=', 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
    ['GITHUB_TOKEN=', 'GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a'],
    ['a JSON "password": "…" pair', '{"user": "alice", "password": "hunter2"}'],
  ])('interrupts a write of a secret spelled with %s', async (_name, content) => {
    const thread = await newThread(server.url, KEY_A);
    const o = await attempt(thread, [{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/secret.txt', content } }] }, { content: 'done' }]);
    expect(existsSync(path.join(wsOf(thread), 'outputs', 'secret.txt')), `written: ${describeOutcome(o)}`).toBe(false);
    expect(o.interrupted, describeOutcome(o)).toBe(true);
  });

  it('interrupts a secret in run_skill_script args (the control case of the next test)', async () => {
    const thread = await newThread(server.url, KEY_A);
    const o = await attempt(thread, [
      { tool_calls: [{ name: 'run_skill_script', args: { skill_id: 'csv-stats', script_name: 'stats.py', args: { note: 'password=hunter2' } } }] },
      { content: 'done' },
    ]);
    expect(o.interrupted, describeOutcome(o)).toBe(true);
  });

  it('interrupts a secret nested past 10,000 argument values (run_skill_script args)', async () => {
    const thread = await newThread(server.url, KEY_A);
    // 10,050 values in 5 objects of 2,010 keys: no container over the gateway's 10,000-member body
    // limit (a single 10,050-key object is refused at the door with a 400, before any run).
    const args: Record<string, unknown> = {};
    for (let g = 0; g < 5; g++) args[`g${g}`] = Object.fromEntries(Array.from({ length: 2_010 }, (_, i) => [`k${i}`, 'x']));
    args.zz_note = 'password=hunter2';
    const o = await attempt(thread, [
      { tool_calls: [{ name: 'run_skill_script', args: { skill_id: 'csv-stats', script_name: 'stats.py', args } }] },
      { content: 'done' },
    ]);
    expect(o.interrupted, describeOutcome(o)).toBe(true);
  });

  it('keeps /ok under 100 ms while a run carries a 512 KiB write_file argument (scanned, checkpointed, written)', async () => {
    const thread = await newThread(server.url, KEY_A);
    const content = 'lorem ipsum dolor sit amet '.repeat(19_000);
    const { result: o, probe } = await underAttack(server.url, [server.pid], () =>
      attempt(thread, [{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/big.txt', content } }] }, { content: 'done' }]),
    );
    expect(o.answer.status).toBe(200);
    expect(probe.worstMs, `worst /ok over ${probe.samples} probes`).toBeLessThan(OK_BUDGET_MS);
  });

  it('stays up and answering while a run carries an 8 MB write_file argument (scanned whole, checkpointed, written)', async () => {
    const thread = await newThread(server.url, KEY_A);
    const content = 'lorem ipsum dolor sit amet '.repeat(300_000);
    const { result: o, probe } = await underAttack(server.url, [server.pid], () =>
      attempt(thread, [{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/big.txt', content } }] }, { content: 'done' }]),
    );
    console.log(`[probe] 8 MB argument: worst /ok ${Math.round(probe.worstMs)} ms over ${probe.samples} probes`);
    expect(o.answer.status).toBe(200);
    expect(probe.failures, 'probes that failed or got no answer').toBe(0);
    expect(probe.worstMs, `worst /ok over ${probe.samples} probes`).toBeLessThan(LARGE_STATE_OK_BUDGET_MS);
  });
});

describe('identity forgery and cross-tenant resumes', () => {
  let thread: string;

  beforeAll(async () => {
    thread = await newThread(server.url, KEY_A);
    const o = await attempt(thread, [{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/config.env', content: 'password=hunter2' } }] }]);
    expect(o.interrupted, describeOutcome(o)).toBe(true);
  });

  it("answers 404 to tenant B resuming tenant A's interrupted thread, even with tenant headers, and leaves it interrupted", async () => {
    const body = { assistant_id: 'agent', command: { resume: { decision: 'approve', by: 'admin@corp' } } };
    const forged = { 'x-tenant-id': TENANT_A, 'x-agentloop-tenant': TENANT_A, tenant: TENANT_A };
    expect((await call(server.url, KEY_B, 'POST', `/threads/${thread}/runs/wait`, body, { headers: forged })).status).toBe(404);
    expect((await call(server.url, KEY_B, 'POST', `/threads/${thread}/runs`, body)).status).toBe(404);
    expect((await call(server.url, KEY_B, 'GET', `/threads/${thread}/state`)).status).toBe(404);
    expect(await threadStatus(server.url, KEY_A, thread)).toBe('interrupted');
    expect(existsSync(path.join(wsOf(thread), 'outputs', 'config.env'))).toBe(false);
  });

  it("rejects a request carrying both tenants' keys (two x-api-key values) instead of picking one", async () => {
    const res = await fetch(`${server.url}/threads/${thread}`, {
      headers: [
        ['x-api-key', KEY_B],
        ['x-api-key', KEY_A],
      ],
    });
    expect(res.status).toBe(401);
  });

  it("records the server-set approver (tenant and key id) beside the client's label, whatever the body claims", async () => {
    const res = await call(server.url, KEY_A, 'POST', `/threads/${thread}/runs/wait`, {
      assistant_id: 'agent',
      command: { resume: { decision: 'approve', by: 'admin@corp', approver_tenant_id: TENANT_B, approver_key_id: 'key_000000000000' } },
      metadata: { approver_tenant_id: TENANT_B, api_key_id: 'key_000000000000' },
      config: { configurable: { model: { provider: 'scripted', turns: [{ content: 'Saved.' }] } } },
    });
    expect(res.status).toBe(200);
    expect(existsSync(path.join(wsOf(thread), 'outputs', 'config.env'))).toBe(true);
    const audit = await call(server.url, KEY_A, 'GET', `/approvals/audit?thread_id=${thread}`);
    expect(audit.status).toBe(200);
    const entries = (audit.json as { entries: Array<Record<string, unknown>> }).entries;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      decision: 'approved',
      decided_by: 'admin@corp',
      approver_tenant_id: TENANT_A,
      approver_key_id: keyId(KEY_A),
    });
    expect(audit.text).not.toContain(KEY_A);
    expect((await call(server.url, KEY_A, 'GET', '/approvals/audit/verify')).json).toMatchObject({ ok: true });
  });

  it("shows tenant B none of tenant A's audit entries, even filtered by A's thread id", async () => {
    const audit = await call(server.url, KEY_B, 'GET', `/approvals/audit?thread_id=${thread}`);
    expect(audit.status).toBe(200);
    expect((audit.json as { entries: unknown[] }).entries).toEqual([]);
    const all = await call(server.url, KEY_B, 'GET', '/approvals/audit');
    expect(all.text).not.toContain(thread);
  });
});
