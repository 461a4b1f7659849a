/**
 * Attack class 5 — leaks in error text (issue 18: skill-script errors echoed the data dir and the
 * skills root and answered differently for existing and missing host files; two skill calls in one
 * turn raced on the skill link with `EEXIST` and the host path).
 *
 * Nothing the API returns — tool results, run errors, HTTP 4xx/5xx bodies — may contain the data
 * dir, the workspace root, the skills root, the repository path, `/tmp/…` or `node_modules`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  ATTACK_ENV,
  KEY_A,
  call,
  hostPaths,
  leaksIn,
  newThread,
  rawRequest,
  runWait,
  spawnServer,
  text,
  toolMessages,
  warmUp,
  type Answer,
  type ServerChild,
  type Values,
} from './harness.js';

let server: ServerChild;
/** A thread of tenant A with uploads/data.csv. */
let thread: string;

beforeAll(async () => {
  server = await spawnServer({ env: ATTACK_ENV });
  await warmUp(server.url, KEY_A, 1);
  thread = await newThread(server.url, KEY_A);
  const form = new FormData();
  form.append('file', new Blob(['name,price\napple,3\npear,5\n'], { type: 'text/csv' }), 'data.csv');
  const up = await call(server.url, KEY_A, 'POST', `/threads/${thread}/files`, undefined, { raw: form });
  expect(up.status, up.text).toBe(201);
}, 120_000);

afterAll(async () => {
  await server?.stop(5_000);
  server?.cleanup();
});

const forbidden = () => hostPaths(server);

/** Runs one turn of tool calls on a new thread (or `on`) and returns the tool results, in order. */
async function tools(calls: Array<{ name: string; args: Record<string, unknown> }>, on?: string): Promise<{ results: string[]; answer: Answer }> {
  const target = on ?? (await newThread(server.url, KEY_A));
  const answer = await runWait(server.url, KEY_A, target, [{ tool_calls: calls }, { content: 'done' }], { timeoutMs: 45_000 });
  const results = toolMessages(answer.json as Values).map(text);
  expect(results.length, `the run answered ${answer.status}: ${answer.text.slice(0, 500)}`).toBe(calls.length);
  return { results, answer };
}

const script = (script_name: string, args: unknown, skill_id = 'csv-stats') => ({ name: 'run_skill_script', args: { skill_id, script_name, args } });

describe('skill scripts', () => {
  it.each([
    ['a missing input file', script('stats.py', { file: 'uploads/missing.csv' })],
    ['a file that is a number', script('stats.py', { file: 123 })],
    ['args that are not JSON', script('stats.py', 'not json {')],
    ['a delimiter that crashes the Python script', script('stats.py', { file: 'uploads/data.csv', delimiter: 5 })],
    ['an output that crashes the Node script', script('stats.mjs', { file: 'uploads/data.csv', output: 123 })],
    ['an output that crashes the Python script', script('stats.py', { file: 'uploads/data.csv', output: ['x'] })],
    ['a file outside the workspace', script('stats.py', { file: '../../../../../../etc/hostname' })],
    ['an absolute host file', script('stats.mjs', { file: '/etc/hostname' })],
    ['a missing script', script('nope.py', {})],
    ['an unknown skill', script('stats.py', {}, 'no-such-skill')],
    ['a script name with ../', script('../SKILL.md', {})],
    ["another skill's file by ../", script('../../pdf/SKILL.md', {})],
    ['a host file by ../', script('../../../../../../../etc/hostname', {})],
    ['an absolute script path', script('/etc/hostname', {})],
    ['a skill id with ../', script('stats.py', {}, '../skills/csv-stats')],
  ])('answers %s with an error that names no host path', async (_name, c) => {
    const { results } = await tools([c], thread);
    expect(results[0]).toMatch(/^Error: /);
    expect(leaksIn(results[0]!, forbidden())).toEqual([]);
  });

  it('writes no script output outside the workspace (output: ../../../escape.json)', async () => {
    const { results } = await tools([script('stats.py', { file: 'uploads/data.csv', output: '../../../escape.json' })], thread);
    expect(existsSync(path.join(server.realDataDir, 'escape.json'))).toBe(false);
    expect(leaksIn(results[0]!, forbidden())).toEqual([]);
  });

  it.each([
    ['script names', (p: string) => script(p, {})],
    ['skill ids', (p: string) => script('stats.py', {}, p)],
    ['script input files', (p: string) => script('stats.py', { file: p })],
  ])('answers the same for an existing and a missing host file given as %s', async (_name, make) => {
    const existing = '../../../../../../../../etc/hostname';
    const missing = '../../../../../../../../etc/nohostfile';
    const { results } = await tools([make(existing), make(missing)], thread);
    const [a, b] = results.map((r, i) => r.replaceAll(i === 0 ? existing : missing, '<path>').replaceAll(i === 0 ? 'hostname' : 'nohostfile', '<name>'));
    expect(a).toBe(b);
    expect(a).toMatch(/^Error: /);
  });

  it.each([1, 2, 3])('loads the same skill twice in one turn without EEXIST (round %i)', async () => {
    const { results } = await tools([
      { name: 'skill', args: { skill: 'pdf' } },
      { name: 'skill', args: { skill: 'pdf' } },
      { name: 'skill', args: { skill: 'csv-stats' } },
    ]);
    for (const r of results) {
      expect(r).not.toMatch(/^Error/);
      expect(r).not.toContain('EEXIST');
    }
    expect(leaksIn(results.join('\n'), forbidden())).toEqual([]);
  });
});

describe('file tools', () => {
  it('answers failing file tools with errors that name no host path', async () => {
    const { results } = await tools([
      { name: 'read_file', args: { file_path: 'outputs/missing.txt' } },
      { name: 'read_file', args: { file_path: 'outputs' } },
      { name: 'write_file', args: { file_path: 'skills/x.txt', content: 'x' } },
      { name: 'write_file', args: { file_path: 'outputs', content: 'x' } },
      { name: 'list_workspace_files', args: { directory: 'nope' } },
      { name: 'find_files', args: { pattern: '*', path: 'nope' } },
      { name: 'search_file', args: { file_path: 'uploads/missing.pdf', query: 'x' } },
      { name: 'read_file', args: { file_path: 'skills/nope/SKILL.md' } },
      { name: 'no_such_tool', args: {} },
      { name: 'read_file', args: { wrong_arg: 1 } },
    ]);
    for (const r of results) expect(r).toMatch(/^Error: /);
    expect(leaksIn(results.join('\n'), forbidden())).toEqual([]);
  });

  it('reports a failed run (unknown model provider, exhausted script) without host paths', async () => {
    const t1 = await newThread(server.url, KEY_A);
    const bad = await call(server.url, KEY_A, 'POST', `/threads/${t1}/runs/wait`, {
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: 'x' }] },
      config: { configurable: { model: { provider: '../../../etc/passwd' } } },
    });
    const t2 = await newThread(server.url, KEY_A);
    const exhausted = await runWait(server.url, KEY_A, t2, [{ tool_calls: [{ name: 'now', args: {} }] }]);
    const runs = await call(server.url, KEY_A, 'GET', `/threads/${t2}/runs`);
    const text = [bad.text, exhausted.text, runs.text].join('\n');
    expect(text).toMatch(/error/i);
    expect(leaksIn(text, forbidden())).toEqual([]);
  });
});

describe('HTTP error bodies', () => {
  it('answers malformed requests with 4xx bodies that name no host path', async () => {
    const t = randomUUID();
    const answers: Array<[string, { status: number; text: string }]> = [
      ['GET not-a-uuid', await call(server.url, KEY_A, 'GET', '/threads/not-a-uuid')],
      ['GET unknown thread', await call(server.url, KEY_A, 'GET', `/threads/${t}`)],
      ['POST bad JSON', await call(server.url, KEY_A, 'POST', '/threads', undefined, { raw: '{"metadata":', headers: { 'content-type': 'application/json' } })],
      ['POST run without assistant', await call(server.url, KEY_A, 'POST', `/threads/${thread}/runs`, { input: 5 })],
      ['GET missing download', await call(server.url, KEY_A, 'GET', `/threads/${thread}/files/outputs/missing.txt`)],
      ['GET download of a folder', await call(server.url, KEY_A, 'GET', `/threads/${thread}/files/uploads`)],
      ['POST files not multipart', await call(server.url, KEY_A, 'POST', `/threads/${thread}/files`, { a: 1 })],
      ['GET bad audit query', await call(server.url, KEY_A, 'GET', '/approvals/audit?limit=abc')],
      ['GET unknown route', await call(server.url, KEY_A, 'GET', '/../../etc/passwd')],
      ['POST text/plain', await call(server.url, KEY_A, 'POST', '/threads', undefined, { raw: 'hello', headers: { 'content-type': 'text/plain' } })],
      ['GET raw traversal', await rawRequest(server.url, KEY_A, 'GET', `/threads/${thread}/files/uploads/../../../../../../../etc/hostname`)],
      ['GET webhook log of unknown run', await call(server.url, KEY_A, 'GET', `/runs/${t}/webhook`)],
    ];
    for (const [name, a] of answers) {
      expect(a.status, `${name}: ${a.text}`).toBeGreaterThanOrEqual(400);
      expect(a.status, `${name}: ${a.text}`).toBeLessThan(500);
      expect(leaksIn(a.text, forbidden()), name).toEqual([]);
    }
  });

  it('stores an upload named ../../../etc/passwd under a safe name and names no host path', async () => {
    const form = new FormData();
    form.append('file', new Blob(['x'], { type: 'text/plain' }), '../../../../etc/passwd');
    form.append('file', new Blob(['y'], { type: 'text/plain' }), '/tmp/evil\u0000.txt');
    const res = await call(server.url, KEY_A, 'POST', `/threads/${thread}/files`, undefined, { raw: form });
    expect(res.status, res.text).toBe(201);
    for (const f of (res.json as { files: Array<{ path: string }> }).files) expect(f.path).toMatch(/^uploads\/[^/]+$/);
    expect(leaksIn(res.text, forbidden())).toEqual([]);
  });
});
