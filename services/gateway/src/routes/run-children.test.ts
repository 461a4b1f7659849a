import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../testing/index.js';
import { RunLifecycle } from '@agentloop/store';

let gw: TestGateway;
afterEach(async () => gw.close());

const KEYS = { AGENTLOOP_API_KEYS: 'key-a:tenant-a,key-b:tenant-b' };
const asA = { 'x-api-key': 'key-a' };
const asB = { 'x-api-key': 'key-b' };

/** A parent run created through the API, and two child runs on their own threads as the orchestrator records them. */
async function parentWithChildren() {
  const thread = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {}, headers: asA })).json().thread_id as string;
  const parent = (
    await gw.app.inject({
      method: 'POST',
      url: `/threads/${thread}/runs`,
      payload: { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'split it' }] } },
      headers: asA,
    })
  ).json().run_id as string;
  const children: string[] = [];
  for (const [i, id] of ['11111111-1111-8111-8111-111111111111', '22222222-2222-8222-8222-222222222222'].entries()) {
    const childThread = `3333333${i}-3333-8333-8333-333333333333`;
    const link = { parent_run_id: parent, parent_thread_id: thread, tool_call_id: `call_${i}` };
    await gw.store.createThread({ tenantId: 'tenant-a', threadId: childThread, metadata: { ...link, delegated: true } });
    await new RunLifecycle(gw.store).admit({
      run: { tenantId: 'tenant-a', threadId: childThread, runId: id, assistantId: 'agent', metadata: link },
      whenBusy: 'reject',
    });
    children.push(id);
  }
  // An unrelated thread and run of the same tenant.
  await gw.app.inject({ method: 'POST', url: '/threads', payload: {}, headers: asA });
  return { thread, parent, children };
}

describe('GET /runs/{run_id}/children', () => {
  it('lists the delegated runs whose parent_run_id is the run, with their threads', async () => {
    gw = await startTestGateway({ orchestrator: false, env: KEYS });
    const { parent, children } = await parentWithChildren();
    const res = await gw.app.inject({ method: 'GET', url: `/runs/${parent}/children`, headers: asA });
    expect(res.statusCode).toBe(200);
    const list = res.json() as Array<{ run_id: string; thread_id: string; metadata: Record<string, unknown> }>;
    expect(list.map((r) => r.run_id).sort()).toEqual([...children].sort());
    expect(list.every((r) => r.metadata.parent_run_id === parent)).toBe(true);
    // Each child is an ordinary run of its own thread.
    const one = await gw.app.inject({ method: 'GET', url: `/threads/${list[0]!.thread_id}/runs/${list[0]!.run_id}`, headers: asA });
    expect(one.json()).toMatchObject({ run_id: list[0]!.run_id, status: 'pending' });
  });

  it('answers an empty list for a run without delegated agents', async () => {
    gw = await startTestGateway({ orchestrator: false, env: KEYS });
    const { children } = await parentWithChildren();
    const res = await gw.app.inject({ method: 'GET', url: `/runs/${children[0]}/children`, headers: asA });
    expect(res.json()).toEqual([]);
  });

  it('answers 404 to another tenant', async () => {
    gw = await startTestGateway({ orchestrator: false, env: KEYS });
    const { parent } = await parentWithChildren();
    const res = await gw.app.inject({ method: 'GET', url: `/runs/${parent}/children`, headers: asB });
    expect(res.statusCode).toBe(404);
  });

  it('rejects a run id that is not a UUID with 422', async () => {
    gw = await startTestGateway({ orchestrator: false, env: KEYS });
    const res = await gw.app.inject({ method: 'GET', url: '/runs/not-a-uuid/children', headers: asA });
    expect(res.statusCode).toBe(422);
  });
});
