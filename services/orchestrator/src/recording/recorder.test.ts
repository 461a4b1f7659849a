/**
 * The recorder stores what repeats once (issue 9): rows hold the messages a model call adds and a
 * tool set hash; the store's read gives back exactly the full requests a plain recording held.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { silentLogger } from '@agentloop/core';
import { createSqliteStore, type SqlStore } from '@agentloop/store';
import type { ToolSpec } from '@agentloop/proto';
import { recordMessages, recordTools } from './format.js';
import { RunRecorder } from './recorder.js';

const tool = (name: string) => ({ name, description: `${name} it`, parametersJsonSchema: `{"type":"object","title":"${name}"}` }) as unknown as ToolSpec;
const TOOLS = [tool('read_file'), tool('write_file')];
const model = { label: 'base', provider: 'openai-compatible' as const, modelId: 'gpt' };
const answer = (id: string) => new AIMessage({ content: '', tool_calls: [{ id, name: 'read_file', args: { file_path: `${id}.txt` }, type: 'tool_call' }] });

let store: SqlStore;
beforeEach(async () => {
  store = createSqliteStore({ path: ':memory:' }) as SqlStore;
  await store.migrate();
});
afterEach(() => store.close());

const rawRows = (runId: string) =>
  store.db
    .selectFrom('run_recordings')
    .select(['event_key', 'payload'])
    .where('run_id', '=', runId)
    .orderBy('seq')
    .execute()
    .then((rows) => rows.map((r) => ({ key: r.event_key, request: (JSON.parse(r.payload) as { request: Record<string, unknown> }).request })));

describe('RunRecorder', () => {
  it('writes each model call as a delta of the previous one over one stored tool set, and reads back the full requests', async () => {
    const recorder = new RunRecorder(store, { tenantId: 't', runId: 'r1' }, silentLogger());
    const human = new HumanMessage('what is in a.txt?');
    const a1 = answer('c1');
    const t1 = new ToolMessage({ content: 'alpha', tool_call_id: 'c1' });
    const a2 = answer('c2');
    const t2 = new ToolMessage({ content: 'beta', tool_call_id: 'c2' });
    // The system prompt is a new object on every call, as the agent node builds it.
    const requests: Array<{ messages: BaseMessage[]; tools: ToolSpec[] }> = [
      { messages: [new SystemMessage('sys'), human], tools: TOOLS },
      { messages: [new SystemMessage('sys'), human, a1, t1], tools: TOOLS },
      { messages: [new SystemMessage('sys'), human, a1, t1, a2, t2], tools: TOOLS },
      // History trimmed (a different second message), and another tool set.
      { messages: [new SystemMessage('sys'), new HumanMessage('summary'), a2, t2], tools: [TOOLS[0]!] },
    ];
    for (const [turn, r] of requests.entries()) {
      await recorder.modelCall({ turn, model, tools: r.tools, messages: r.messages, response: answer(`x${turn}`), startedAt: new Date() });
    }

    const events = await store.listRecordingEvents('t', 'r1');
    expect(events.map((e) => e.payload.request)).toEqual(
      requests.map((r) => ({
        model: { label: 'base', provider: 'openai-compatible', model_id: 'gpt' },
        messages: recordMessages(r.messages),
        tools: recordTools(r.tools),
      })),
    );

    const rows = await rawRows('r1');
    expect(rows.map((r) => [r.key, (r.request.messages as unknown[]).length, r.request.$stored && Object.keys(r.request.$stored)])).toEqual([
      ['model:0', 2, ['tools_set']],
      ['model:1', 2, ['base', 'tools_set']],
      ['model:2', 2, ['base', 'tools_set']],
      ['model:3', 3, ['base', 'tools_set']],
    ]);
    expect(rows.map((r) => (r.request.$stored as { base?: unknown }).base)).toEqual([
      undefined,
      { event: 'model:0', keep: 2 },
      { event: 'model:1', keep: 4 },
      { event: 'model:2', keep: 1 },
    ]);
    expect(rows.every((r) => !('tools' in r.request))).toBe(true);
    const sets = await store.db.selectFrom('run_recording_toolsets').select(['tenant_id', 'tools']).execute();
    expect(sets.map((s) => [s.tenant_id, (JSON.parse(s.tools) as Array<{ name: string }>).map((t) => t.name)])).toEqual([
      ['t', ['read_file', 'write_file']],
      ['t', ['read_file']],
    ]);
  });

  it('shares the history after a system prompt that changed (it names the current second)', async () => {
    const recorder = new RunRecorder(store, { tenantId: 't', runId: 'r3' }, silentLogger());
    const human = new HumanMessage('hi');
    const a1 = answer('c1');
    const t1 = new ToolMessage({ content: 'alpha', tool_call_id: 'c1' });
    const requests = [
      [new SystemMessage('sys at 10:00:01'), human],
      [new SystemMessage('sys at 10:00:02'), human, a1, t1],
      [new SystemMessage('sys at 10:00:02'), human, a1, t1, answer('c2')],
    ];
    for (const [turn, messages] of requests.entries()) {
      await recorder.modelCall({ turn, model, tools: TOOLS, messages, response: answer(`x${turn}`), startedAt: new Date() });
    }
    const events = await store.listRecordingEvents('t', 'r3');
    expect(events.map((e) => (e.payload.request as { messages: unknown }).messages)).toEqual(requests.map((m) => recordMessages(m)));
    const rows = await rawRows('r3');
    expect(rows.map((r) => [(r.request.messages as unknown[]).length, (r.request.$stored as { base?: unknown }).base])).toEqual([
      [2, undefined],
      [3, { event: 'model:0', keep: 2, head: 1 }],
      [1, { event: 'model:1', keep: 4 }],
    ]);
  });

  it('does not build on a model call whose key was written before (a step re-run): the next one is a full copy', async () => {
    const first = new RunRecorder(store, { tenantId: 't', runId: 'r2' }, silentLogger());
    const msgs = [new SystemMessage('sys'), new HumanMessage('hi')];
    await first.modelCall({ turn: 0, model, tools: TOOLS, messages: msgs, response: answer('c1'), startedAt: new Date() });
    const again = new RunRecorder(store, { tenantId: 't', runId: 'r2' }, silentLogger());
    const other = [new SystemMessage('sys'), new HumanMessage('hello')];
    await again.modelCall({ turn: 0, model, tools: TOOLS, messages: other, response: answer('c1'), startedAt: new Date() });
    await again.modelCall({ turn: 1, model, tools: TOOLS, messages: [...other, answer('c1')], response: answer('c2'), startedAt: new Date() });
    const rows = await rawRows('r2');
    expect(rows.map((r) => [r.key, (r.request.$stored as { base?: unknown }).base])).toEqual([
      ['model:0', undefined],
      ['model:1', undefined],
    ]);
    const events = await store.listRecordingEvents('t', 'r2');
    expect((events[1]!.payload.request as { messages: unknown[] }).messages).toEqual(recordMessages([...other, answer('c1')]));
  });
});
