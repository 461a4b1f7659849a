import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../testing/index.js';

let gw: TestGateway;
afterEach(async () => gw.close());

const KEYS = { AGENTLOOP_API_KEYS: 'key-a:tenant-a,key-b:tenant-b' };
const asA = { 'x-api-key': 'key-a' };
const asB = { 'x-api-key': 'key-b' };
const INPUT = { messages: [{ role: 'user', content: 'what does my note say?' }] };

/** A run of tenant A (no orchestrator: it stays pending) with a recording as the orchestrator writes it. */
async function recordedRun(opts: { record?: boolean } = {}) {
  const thread = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {}, headers: asA })).json().thread_id as string;
  const run = (
    await gw.app.inject({
      method: 'POST',
      url: `/threads/${thread}/runs`,
      payload: { assistant_id: 'agent', input: INPUT, config: { configurable: { model_pref: 'base' } } },
      headers: asA,
    })
  ).json().run_id as string;
  if (opts.record !== false) {
    const base = { tenantId: 'tenant-a', runId: run };
    await gw.store.appendRecordingEvent({
      ...base,
      key: 'model:0',
      kind: 'model_call',
      step: 0,
      payload: { request: { messages: [], tools: [] }, response: { type: 'ai', content: '' } },
    });
    await gw.store.appendRecordingEvent({
      ...base,
      key: 'tool:c1',
      kind: 'tool_call',
      step: 0,
      payload: { call: { id: 'c1', name: 'read_file', args: {} }, result: { content: 'friday', is_error: false, error_code: null } },
    });
    await gw.store.appendRecordingEvent({
      ...base,
      key: 'model:1',
      kind: 'model_call',
      step: 1,
      payload: { request: { messages: [], tools: [] }, response: { type: 'ai', content: 'friday' } },
    });
  }
  return { thread, run };
}

describe('GET /runs/{run_id}/recording', () => {
  it('exports the events in order as a versioned document, thread-scoped too; another tenant gets 404', async () => {
    gw = await startTestGateway({ orchestrator: false, env: KEYS });
    const { thread, run } = await recordedRun();
    const res = await gw.app.inject({ method: 'GET', url: `/runs/${run}/recording`, headers: asA });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as { events: Array<{ kind: string; step: number }> } & Record<string, unknown>;
    expect(doc).toMatchObject({ format: 'agentloop.run-recording', version: 1, run_id: run, thread_id: thread, parent_run_id: null, input: INPUT });
    expect(doc.events.map((e) => [e.kind, e.step])).toEqual([
      ['model_call', 0],
      ['tool_call', 0],
      ['model_call', 1],
    ]);
    expect(doc.events[1]).toMatchObject({ call: { name: 'read_file' }, result: { content: 'friday' } });
    const scoped = await gw.app.inject({ method: 'GET', url: `/threads/${thread}/runs/${run}/recording`, headers: asA });
    expect(scoped.json()).toEqual(doc);
    expect((await gw.app.inject({ method: 'GET', url: `/runs/${run}/recording`, headers: asB })).statusCode).toBe(404);
    expect((await gw.app.inject({ method: 'GET', url: `/threads/${thread}/runs/${run}/recording`, headers: asB })).statusCode).toBe(404);
  });

  it('answers 404 saying how to record for a run that was not recorded', async () => {
    gw = await startTestGateway({ orchestrator: false, env: KEYS });
    const { run } = await recordedRun({ record: false });
    const res = await gw.app.inject({ method: 'GET', url: `/runs/${run}/recording`, headers: asA });
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('RECORD_RUNS');
  });
});

describe('replay_of on run creation', () => {
  it('runs the recorded input and config, marked for the orchestrator; the outcome shows as metadata.replay', async () => {
    gw = await startTestGateway({ orchestrator: false, env: KEYS });
    const { run } = await recordedRun();
    const thread = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {}, headers: asA })).json().thread_id as string;
    const created = await gw.app.inject({
      method: 'POST',
      url: `/threads/${thread}/runs`,
      payload: { assistant_id: 'agent', replay_of: run, replay_tools: 'execute' },
      headers: asA,
    });
    expect(created.statusCode).toBe(200);
    const replay = created.json() as { run_id: string; kwargs: { input: unknown; config: { configurable: Record<string, unknown> } } };
    expect(replay.kwargs.input).toEqual(INPUT);
    expect(replay.kwargs.config.configurable).toMatchObject({ model_pref: 'base', agentloop_replay: { of: run, tools: 'execute' } });
    const path = `/threads/${thread}/runs/${replay.run_id}`;
    expect((await gw.app.inject({ method: 'GET', url: path, headers: asA })).json().metadata.replay).toEqual({ pending: true });
    const outcome = { of: run, tools: 'execute', diverged: true, at: { step: 0, kind: 'tool_result', expected: 'friday', actual: 'monday' } };
    await gw.store.appendRecordingEvent({ tenantId: 'tenant-a', runId: replay.run_id, key: 'replay', kind: 'replay', step: 0, payload: outcome });
    expect((await gw.app.inject({ method: 'GET', url: path, headers: asA })).json().metadata.replay).toEqual(outcome);
  });

  it("refuses another tenant's run (404), a run without recording and a replay with its own input (422 naming the field)", async () => {
    gw = await startTestGateway({ orchestrator: false, env: KEYS });
    const { run } = await recordedRun();
    const { run: bare } = await recordedRun({ record: false });
    const post = (headers: Record<string, string>, payload: Record<string, unknown>) =>
      gw.app.inject({ method: 'POST', url: '/runs', payload: { assistant_id: 'agent', ...payload }, headers });
    expect((await post(asB, { replay_of: run })).statusCode).toBe(404);
    const noRecording = await post(asA, { replay_of: bare });
    expect(noRecording.statusCode).toBe(422);
    expect(noRecording.body).toContain('body.replay_of');
    const withInput = await post(asA, { replay_of: run, input: INPUT });
    expect(withInput.statusCode).toBe(422);
    expect(withInput.body).toContain('body.input');
    const toolsAlone = await post(asA, { replay_tools: 'execute', input: INPUT });
    expect(toolsAlone.statusCode).toBe(422);
    expect(toolsAlone.body).toContain('body.replay_tools');
  });
});
