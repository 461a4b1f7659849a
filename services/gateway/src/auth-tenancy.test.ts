import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './testing/index.js';

let gw: TestGateway;
beforeEach(async () => {
  gw = await startTestGateway({ env: { AGENTLOOP_API_KEYS: 'key-a:tenantA,key-b:tenantB', CORS_ORIGINS: 'http://ui.test' } });
});
afterEach(async () => gw.close());

const A = { 'x-api-key': 'key-a' };
const B = { 'x-api-key': 'key-b' };
const hi = { messages: [{ role: 'user', content: 'secret plans' }] };

async function threadWithRun(headers: Record<string, string>) {
  const thread = (await gw.app.inject({ method: 'POST', url: '/threads', headers, payload: { metadata: { owner: 'a' } } })).json();
  await gw.app.inject({ method: 'POST', url: `/threads/${thread.thread_id}/runs/wait`, headers, payload: { assistant_id: 'agent', input: hi } });
  const [run] = (await gw.app.inject({ method: 'GET', url: `/threads/${thread.thread_id}/runs`, headers })).json();
  return { threadId: thread.thread_id as string, runId: run.run_id as string };
}

describe('authentication', () => {
  it('rejects a request without an API key with 401', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/threads', payload: {} });
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toContain('x-api-key');
  });

  it('rejects an unknown API key with 401', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/info', headers: { 'x-api-key': 'nope' } });
    expect(res.statusCode).toBe(401);
  });

  it('serves /ok without a key', async () => {
    expect((await gw.app.inject({ method: 'GET', url: '/ok' })).statusCode).toBe(200);
  });

  it('accepts the key as a bearer token', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/info', headers: { authorization: 'Bearer key-b' } });
    expect(res.statusCode).toBe(200);
  });

  it("stores runs under the key's tenant", async () => {
    await threadWithRun(A);
    expect(gw.orchestrator!.jobs[0]!.tenantId).toBe('tenantA');
  });

  it('answers a CORS preflight from an allowed origin without a key', async () => {
    const res = await gw.app.inject({
      method: 'OPTIONS',
      url: '/threads',
      headers: { origin: 'http://ui.test', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key,content-type' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('http://ui.test');
    expect(res.headers['access-control-allow-headers']).toBe('x-api-key,content-type');
  });
});

describe('tenant isolation', () => {
  it("hides a tenant's thread, state and runs from another tenant", async () => {
    const { threadId, runId } = await threadWithRun(A);
    const asB = (method: 'GET' | 'POST' | 'DELETE' | 'PATCH', url: string, payload?: object) =>
      gw.app.inject({ method, url, headers: B, ...(payload ? { payload } : {}) });
    const statuses = [
      (await asB('GET', `/threads/${threadId}`)).statusCode,
      (await asB('GET', `/threads/${threadId}/state`)).statusCode,
      (await asB('PATCH', `/threads/${threadId}`, { metadata: { owner: 'b' } })).statusCode,
      (await asB('GET', `/threads/${threadId}/runs`)).statusCode,
      (await asB('GET', `/threads/${threadId}/runs/${runId}`)).statusCode,
      (await asB('GET', `/threads/${threadId}/runs/${runId}/join`)).statusCode,
      (await asB('GET', `/threads/${threadId}/runs/${runId}/stream`)).statusCode,
      (await asB('POST', `/threads/${threadId}/runs`, { assistant_id: 'agent', input: hi })).statusCode,
      (await asB('DELETE', `/threads/${threadId}`)).statusCode,
    ];
    expect(statuses).toEqual([404, 404, 404, 404, 404, 404, 404, 404, 404]);
    const search = (await asB('POST', '/threads/search', { metadata: { owner: 'a' } })).json();
    const searchIds = (await asB('POST', '/threads/search', { ids: [threadId] })).json();
    expect(search).toEqual([]);
    expect(searchIds).toEqual([]);
    // Still intact for its owner.
    const own = await gw.app.inject({ method: 'GET', url: `/threads/${threadId}`, headers: A });
    expect(own.json()).toMatchObject({ thread_id: threadId, metadata: { owner: 'a' } });
  });

  it('lets two tenants use the same thread id independently', async () => {
    const threadId = '11111111-1111-4111-8111-111111111111';
    await gw.app.inject({ method: 'POST', url: '/threads', headers: A, payload: { thread_id: threadId, metadata: { t: 'a' } } });
    const b = await gw.app.inject({ method: 'POST', url: '/threads', headers: B, payload: { thread_id: threadId, metadata: { t: 'b' } } });
    expect(b.statusCode).toBe(200);
    const a = (await gw.app.inject({ method: 'GET', url: `/threads/${threadId}`, headers: A })).json();
    expect(a.metadata).toEqual({ t: 'a' });
  });
});
