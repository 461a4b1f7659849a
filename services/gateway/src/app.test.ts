import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryRunEventStream } from '@agentloop/bus';
import { AgentLoopError, MAX_JSON_DEPTH, MAX_JSON_MEMBERS, silentLogger } from '@agentloop/core';
import { MemoryQueue } from '@agentloop/queue';
import { createSqliteStore } from '@agentloop/store';
import { createTempDir, type TempDir } from '@agentloop/workspace';
import { createGatewayApp } from './app.js';
import { loadGatewayConfig } from './config.js';
import { ApiError, invalid } from './errors.js';
import { startTestGateway, type TestGateway } from './testing/index.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const nestedArrays = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('JSON request bodies', () => {
  it('answers 400 naming the limit for a body of 10,000 nested arrays, and keeps serving', async () => {
    gw = await startTestGateway();
    // Before the limit: parsed, then the store's JSON.stringify of the metadata threw a RangeError (500).
    for (const payload of [nestedArrays(10_000), `{"metadata":{"a":${nestedArrays(10_000)}}}`]) {
      const res = await gw.app.inject({ method: 'POST', url: '/threads', headers: { 'content-type': 'application/json' }, payload });
      expect(res.statusCode).toBe(400);
      expect((res.json() as { detail: string }).detail).toBe(
        `Request body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects (the limit); flatten it.`,
      );
    }
    expect(await gw.store.searchThreads('default', { limit: 10, offset: 0 })).toEqual([]);
    const started = performance.now();
    expect((await gw.app.inject({ method: 'GET', url: '/ok' })).statusCode).toBe(200);
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('answers 400 for deep nesting inside a run’s input, before any run or thread is made', async () => {
    gw = await startTestGateway();
    const thread = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {} })).json() as { thread_id: string };
    const payload = `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":${nestedArrays(10_000)}}]}}`;
    const res = await gw.app.inject({
      method: 'POST',
      url: `/threads/${thread.thread_id}/runs/wait`,
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(res.statusCode).toBe(400);
    expect(await gw.store.listRuns('default', thread.thread_id, { limit: 10, offset: 0 })).toEqual([]);
    const stateless = await gw.app.inject({ method: 'POST', url: '/runs/wait', headers: { 'content-type': 'application/json' }, payload });
    expect(stateless.statusCode).toBe(400);
    expect(await gw.store.searchThreads('default', { limit: 10, offset: 0 })).toHaveLength(1);
  });

  it('accepts nesting up to the limit, and brackets inside strings do not count', async () => {
    gw = await startTestGateway();
    // {"metadata": {"a": [[...]]}}: 2 levels of objects plus the arrays.
    const atLimit = `{"metadata":{"a":${nestedArrays(MAX_JSON_DEPTH - 2)}}}`;
    expect((await gw.app.inject({ method: 'POST', url: '/threads', headers: { 'content-type': 'application/json' }, payload: atLimit })).statusCode).toBe(200);
    const overLimit = `{"metadata":{"a":${nestedArrays(MAX_JSON_DEPTH - 1)}}}`;
    expect((await gw.app.inject({ method: 'POST', url: '/threads', headers: { 'content-type': 'application/json' }, payload: overLimit })).statusCode).toBe(
      400,
    );
    const inString = JSON.stringify({ metadata: { note: nestedArrays(10_000) } });
    const res = await gw.app.inject({ method: 'POST', url: '/threads', headers: { 'content-type': 'application/json' }, payload: inString });
    expect(res.statusCode).toBe(200);
    expect((res.json() as { metadata: { note: string } }).metadata.note).toHaveLength(20_000);
  });

  it('answers 400 naming the limit for an object of 100,000 keys, before parsing it, and stores nothing', async () => {
    gw = await startTestGateway();
    const metadata = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, 'v']));
    const res = await gw.app.inject({ method: 'POST', url: '/threads', payload: { metadata } });
    expect(res.statusCode).toBe(400);
    expect((res.json() as { detail: string }).detail).toBe(
      `Request body has an object or array with more than ${MAX_JSON_MEMBERS} members (the limit); send large data as a file upload.`,
    );
    expect(await gw.store.searchThreads('default', { limit: 10, offset: 0 })).toEqual([]);
  });

  it('still answers 400 for a body that is not JSON', async () => {
    gw = await startTestGateway();
    const res = await gw.app.inject({ method: 'POST', url: '/threads', headers: { 'content-type': 'application/json' }, payload: '{nope' });
    expect(res.statusCode).toBe(400);
    expect((res.json() as { detail: string }).detail).toMatch(/^Request body is not valid JSON/);
  });
});

describe('error text redaction', () => {
  let tmp: TempDir | undefined;
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    await tmp?.[Symbol.asyncDispose]();
    app = undefined;
    tmp = undefined;
  });

  /** A gateway whose extra routes throw errors carrying host paths, as a leaky layer would. */
  async function leakyApp(): Promise<{ app: FastifyInstance }> {
    tmp = await createTempDir('agentloop-redaction-');
    const dataDir = path.join(tmp.path, 'data');
    const workspaceRoot = path.join(dataDir, 'workspaces');
    const config = loadGatewayConfig({ WORKSPACE_ROOT: workspaceRoot });
    const store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
    const a = await createGatewayApp({
      store,
      runs: new MemoryQueue('runs'),
      events: new MemoryRunEventStream(),
      logger: silentLogger(),
      config,
      redactPaths: [{ path: '/opt/agentloop-skills', label: 'skills' }],
    });
    a.addHook('onClose', async () => store.close());
    a.get('/leak/known', () => {
      throw new AgentLoopError('NOT_FOUND', `ENOENT: no such file or directory, open '${workspaceRoot}/acme/t1/uploads/a.csv'`);
    });
    a.get('/leak/client', () => {
      throw new ApiError('CONFLICT', `busy: ${path.join(tmpdir(), 'agentloop-skill-123', 'x')} and ${dataDir}/agentloop.sqlite`);
    });
    a.get('/leak/skills', () => {
      throw new AgentLoopError('TOOL_FAILED', 'File "/opt/agentloop-skills/pdf/scripts/x.py", line 3', { retryable: false });
    });
    a.get('/leak/validation', () => {
      throw invalid('body.file', `not found: ${path.join(process.cwd(), 'secret.txt')}`);
    });
    a.get('/leak/internal', () => {
      throw new Error(`unexpected state of ${workspaceRoot}`);
    });
    a.get('/leak/database', () => {
      throw Object.assign(new Error(`connect ECONNREFUSED 10.0.0.7:3306 (${workspaceRoot})`), { code: 'ECONNREFUSED' });
    });
    await a.ready();
    app = a;
    return { app: a };
  }

  it('replaces host paths under the known roots in every error detail', async () => {
    const { app: a } = await leakyApp();
    const detail = async (url: string) => {
      const res = await a.inject({ method: 'GET', url });
      return { status: res.statusCode, body: res.json() as { detail: string; errors?: Array<{ path: string; message: string }> } };
    };
    expect(await detail('/leak/known')).toEqual({
      status: 404,
      body: { detail: "ENOENT: no such file or directory, open '<workspace-root>/acme/t1/uploads/a.csv'" },
    });
    expect((await detail('/leak/client')).body).toEqual({ detail: 'busy: <tmp>/agentloop-skill-123/x and <data>/agentloop.sqlite' });
    expect((await detail('/leak/skills')).body.detail).toBe('File "skills/pdf/scripts/x.py", line 3');
    const validation = await detail('/leak/validation');
    expect(validation.status).toBe(422);
    expect(validation.body.detail).toMatch(/^Invalid request: body\.file: not found: (<app>|~)\/secret\.txt$/);
    expect(validation.body.errors).toEqual([{ path: 'body.file', message: expect.stringMatching(/^not found: (<app>|~)\/secret\.txt$/) as unknown as string }]);
    expect(await detail('/leak/internal')).toEqual({ status: 500, body: { detail: 'Internal server error.' } });
  });

  it('answers a database or bus that is down for now with 503 and Retry-After, without its text', async () => {
    const { app: a } = await leakyApp();
    const res = await a.inject({ method: 'GET', url: '/leak/database' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toEqual({ detail: 'A backing service (database or message bus) is unavailable for now; retry shortly.' });
  });
});
