import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { silentLogger } from '@agentloop/core';
import { createSqliteStore, type RecordingEvent } from '@agentloop/store';
import type { ToolSpec } from '@agentloop/proto';
import { REPORT_STRING_MAX, ReplayExhaustedError, ReplaySession } from './replay-session.js';
import { ReplayChatModel } from './replay-model.js';
import { RunRecorder } from './recorder.js';
import { openRunTape, shouldRecord } from './run-tape.js';
import type { ModelCallRecord } from './tape.js';

const TOOLS = [{ name: 'read_file', description: 'Read a file', parametersJsonSchema: '{"type":"object"}' }] as unknown as ToolSpec[];
const model = { label: 'base', provider: 'openai-compatible' as const, modelId: 'gpt' };
const call = { id: 'c1', name: 'read_file', args: { file_path: 'notes.txt' } };
const firstAnswer = new AIMessage({
  id: 'run-1-answer-1',
  content: '',
  tool_calls: [{ ...call, type: 'tool_call' }],
  usage_metadata: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
});
const finalAnswer = new AIMessage({ content: 'The note says: friday' });
const asked = [new SystemMessage('sys'), new HumanMessage('what does my note say?')];
const answered = [...asked, firstAnswer, new ToolMessage({ content: 'friday', tool_call_id: 'c1', name: 'read_file' })];

const record = (turn: number, messages: ModelCallRecord['messages'], response: AIMessage): ModelCallRecord => ({
  turn,
  model,
  tools: TOOLS,
  messages,
  response,
  startedAt: new Date(),
});

/** Records a two-call run through the real recorder into an in-memory SQLite store, and reads it back as replay does. */
async function recordRun(): Promise<RecordingEvent[]> {
  const store = createSqliteStore({ path: ':memory:' });
  try {
    await store.migrate();
    const recorder = new RunRecorder(store, { tenantId: 't', runId: 'r1' }, silentLogger());
    await recorder.modelCall(record(0, asked, firstAnswer));
    await recorder.toolCall(0, call, () => Promise.resolve({ content: 'friday', isError: false }));
    await recorder.modelCall(record(1, answered, finalAnswer));
    return await store.listRecordingEvents('t', 'r1');
  } finally {
    await store.close();
  }
}

describe('ReplaySession', () => {
  it('answers each model call with the recorded answer of its index, tools from the recording, and reports no divergence', async () => {
    const session = new ReplaySession('r1', 'recorded', await recordRun(), silentLogger());
    const replayModel = new ReplayChatModel(session);
    const first = (await replayModel.invoke(asked, { scripted_turn: 0 })) as AIMessage;
    expect(first.tool_calls).toEqual([expect.objectContaining({ id: 'c1', name: 'read_file', args: { file_path: 'notes.txt' } })]);
    expect(first.usage_metadata?.total_tokens).toBe(7);
    // Not the recorded id: on the recorded thread it would replace the recorded message.
    expect(first.id).not.toBe('run-1-answer-1');
    await session.modelCall(record(0, asked, first));
    const executed: string[] = [];
    const result = await session.toolCall(0, call, () => {
      executed.push('read_file');
      return Promise.resolve({ content: 'monday', isError: false });
    });
    expect(result).toEqual({ content: 'friday', isError: false });
    expect(executed).toEqual([]);
    const second = (await replayModel.invoke(answered, { scripted_turn: 1 })) as AIMessage;
    expect(second.content).toBe('The note says: friday');
    await session.modelCall(record(1, answered, second));
    expect(session.report()).toEqual({ of: 'r1', tools: 'recorded', diverged: false });
  });

  it('with executed tools, reports the first tool result that differs, with both contents', async () => {
    const session = new ReplaySession('r1', 'execute', await recordRun(), silentLogger());
    session.answer(0);
    const result = await session.toolCall(0, call, () => Promise.resolve({ content: 'monday', isError: false }));
    expect(result.content).toBe('monday');
    session.answer(1);
    // The request of call 1 now differs too; only the first divergence is kept.
    await session.modelCall(record(1, [...asked, firstAnswer, new ToolMessage({ content: 'monday', tool_call_id: 'c1' })], finalAnswer));
    expect(session.report()).toEqual({
      of: 'r1',
      tools: 'execute',
      diverged: true,
      at: {
        step: 0,
        kind: 'tool_result',
        path: 'tool_calls[c1]',
        expected: { tool: 'read_file', content: 'friday', is_error: false },
        actual: { tool: 'read_file', content: 'monday', is_error: false },
      },
    });
  });

  it('reports a model request that differs, naming the message and field', async () => {
    const session = new ReplaySession('r1', 'recorded', await recordRun(), silentLogger());
    session.answer(0);
    await session.modelCall(record(0, [new SystemMessage('sys'), new HumanMessage('what does my memo say?')], firstAnswer));
    const report = session.report();
    expect(report).toMatchObject({
      diverged: true,
      at: { step: 0, kind: 'model_request', path: 'messages[1].content', expected: 'what does my note say?', actual: 'what does my memo say?' },
    });
  });

  it('stops at a model call beyond the recording (extra_call), and reports calls never made (missing_call)', async () => {
    const extra = new ReplaySession('r1', 'recorded', await recordRun(), silentLogger());
    expect(() => extra.answer(2)).toThrow(ReplayExhaustedError);
    expect(extra.report()).toMatchObject({ diverged: true, at: { step: 2, kind: 'extra_call' } });

    const missing = new ReplaySession('r1', 'recorded', await recordRun(), silentLogger());
    missing.answer(0);
    await missing.toolCall(0, call, () => Promise.reject(new Error('not called')));
    expect(missing.report()).toMatchObject({ diverged: true, at: { step: 1, kind: 'missing_call', expected: { model_call: 1 }, actual: null } });
  });

  it('cuts long values in the report, saying how much', async () => {
    const session = new ReplaySession('r1', 'execute', await recordRun(), silentLogger());
    await session.toolCall(0, call, () => Promise.resolve({ content: 'y'.repeat(REPORT_STRING_MAX + 500), isError: false }));
    const report = session.report() as { at: { actual: { content: string } } };
    expect(report.at.actual.content).toBe(`${'y'.repeat(REPORT_STRING_MAX)}… [500 more characters]`);
  });

  it('answers a tool call the recording does not have with an error, without executing it in recorded mode', async () => {
    const session = new ReplaySession('r1', 'recorded', await recordRun(), silentLogger());
    const r = await session.toolCall(0, { id: 'c9', name: 'write_file', args: {} }, () => Promise.reject(new Error('must not run')));
    expect(r).toMatchObject({ isError: true });
    expect(session.report()).toMatchObject({ diverged: true, at: { kind: 'extra_call', actual: { tool: 'write_file', tool_call_id: 'c9' } } });
  });
});

describe('openRunTape', () => {
  const store = (events: RecordingEvent[]) => ({
    appendRecordingEvent: () => Promise.resolve(true),
    saveRecordingToolset: () => Promise.resolve('hash'),
    listRecordingEvents: () => Promise.resolve(events),
  });
  const job = { tenantId: 't', runId: 'r2' };
  const replayOf = (of: string, tools: string) => ({ agentloop_replay: { of, tools } });

  it('refuses to execute the tool calls of an imported recording unless the scripted provider is allowed', async () => {
    const events = await recordRun();
    const policy = { mode: 'off' as const, tenants: new Set<string>() };
    await expect(openRunTape({ store: store(events), policy }, job, replayOf('import-x', 'execute'), silentLogger())).rejects.toThrow(/ALLOW_SCRIPTED_MODEL/);
    const recorded = await openRunTape({ store: store(events), policy }, job, replayOf('import-x', 'recorded'), silentLogger());
    expect(recorded.replay?.toolMode).toBe('recorded');
    const allowed = await openRunTape(
      { store: store(events), policy: { ...policy, executeImported: true } },
      job,
      replayOf('import-x', 'execute'),
      silentLogger(),
    );
    expect(allowed.replay?.toolMode).toBe('execute');
    const ownRun = await openRunTape({ store: store(events), policy }, job, replayOf('r1', 'execute'), silentLogger());
    expect(ownRun.replay?.toolMode).toBe('execute');
  });

  it('refuses a replay of a run without recorded model calls, and a malformed marker', async () => {
    const policy = { mode: 'all' as const, tenants: new Set<string>() };
    await expect(openRunTape({ store: store([]), policy }, job, replayOf('r1', 'recorded'), silentLogger())).rejects.toThrow(/no recorded model call/);
    await expect(openRunTape({ store: store([]), policy }, job, replayOf('r1', 'sometimes'), silentLogger())).rejects.toThrow(/agentloop_replay/);
    const plain = await openRunTape({ store: store([]), policy }, job, {}, silentLogger());
    expect(plain.replay).toBeUndefined();
    expect(plain.tape).toBeInstanceOf(RunRecorder);
  });
});

describe('shouldRecord', () => {
  const policy = (mode: 'all' | 'off' | 'opt-in', tenants: string[] = []) => ({ mode, tenants: new Set(tenants) });
  it('all: every run but one that says record: false; off: none; opt-in: record: true or a listed tenant', () => {
    expect(shouldRecord(policy('all'), 't', {})).toBe(true);
    expect(shouldRecord(policy('all'), 't', { record: false })).toBe(false);
    expect(shouldRecord(policy('off'), 't', { record: true })).toBe(false);
    expect(shouldRecord(policy('opt-in'), 't', {})).toBe(false);
    expect(shouldRecord(policy('opt-in'), 't', { record: true })).toBe(true);
    expect(shouldRecord(policy('opt-in', ['t']), 't', {})).toBe(true);
    expect(shouldRecord(policy('opt-in', ['t']), 't', { record: false })).toBe(false);
  });
});
