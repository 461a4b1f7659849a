/**
 * Record and replay through the real agent graph (issue 17): a run recorded with its tape replays
 * on another thread with the replay model and no divergence, including a compaction summary call
 * (which takes a model call index like any other); a tool that now answers differently is reported.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import { HumanMessage } from '@langchain/core/messages';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { silentLogger } from '@agentloop/core';
import { createSqliteStore, type Store } from '@agentloop/store';
import { buildAgentGraph, type RunContext } from '../graph.js';
import { ScriptedChatModel, type ScriptedTurn } from '../models/scripted.js';
import { promptTexts } from '../prompts.js';
import type { ResolvedModel } from '../models/registry.js';
import type { ToolCallInput } from '../tool-client.js';
import { RunRecorder } from './recorder.js';
import { ReplaySession } from './replay-session.js';
import { replayModel } from './replay-model.js';
import type { RunTape } from './tape.js';

const spec = create(ToolSpecSchema, { name: 'echo', description: 'echo', parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });

/** An agent graph over one in-test tool, whose answers carry `suffix`. */
function world(suffix: string) {
  const contexts = new Map<string, RunContext>();
  const executed: string[] = [];
  const tools = {
    listTools: () => Promise.resolve([spec]),
    execute: (c: ToolCallInput) => {
      executed.push(c.runId);
      return Promise.resolve({ content: `echo${suffix}:${JSON.stringify(c.args)}`, isError: false });
    },
  };
  const graph = buildAgentGraph({ tools, checkpointer: new MemorySaver(), runContext: (id) => contexts.get(id), compactTokenBudget: 1000 });
  async function run(thread: string, runId: string, text: string, model: ResolvedModel, tape?: RunTape) {
    contexts.set(runId, {
      runId,
      tenantId: 't1',
      threadId: thread,
      model,
      logger: silentLogger(),
      signal: new AbortController().signal,
      ...(tape ? { tape } : {}),
    });
    return graph.invoke(
      { messages: [new HumanMessage(text)], loops: 0, context_id: runId },
      { configurable: { thread_id: `t1:${thread}`, run_id: runId }, recursionLimit: 200 },
    );
  }
  return { run, executed };
}

const scripted = (turns: ScriptedTurn[]): ResolvedModel => ({
  model: new ScriptedChatModel(turns),
  label: 'scripted',
  provider: 'scripted',
  modelId: 'scripted',
});

let stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close()));
  stores = [];
});

/** A real (in-memory SQLite) store to record into: replay reads what its `listRecordingEvents` expands. */
async function recordingStore(): Promise<Store> {
  const store = createSqliteStore({ path: ':memory:' });
  stores.push(store);
  await store.migrate();
  return store;
}

const FIRST: ScriptedTurn[] = [{ tool_calls: [{ name: 'echo', args: { pad: 'x'.repeat(6000) } }] }, { content: 'a1' }];
const SECOND: ScriptedTurn[] = [{ content: 'SUMMARY' }, { tool_calls: [{ name: 'echo', args: { q: 1 } }] }, { content: 'a2' }];

describe('record and replay through the agent graph', () => {
  it('records a compaction summary as a model call and replays the run on another thread without divergence', async () => {
    const recorded = world('');
    const store = await recordingStore();
    await recorded.run('A', 'r1', 'hi', scripted(FIRST));
    const original = await recorded.run(
      'A',
      'r2',
      'second question',
      scripted(SECOND),
      new RunRecorder(store, { tenantId: 't1', runId: 'r2' }, silentLogger()),
    );
    const events = await store.listRecordingEvents('t1', 'r2');
    expect(
      events.map((e) => [e.kind, e.step]),
      JSON.stringify(original.messages.map((m) => [m.getType(), m.content])),
    ).toEqual([
      ['model_call', 0],
      ['model_call', 1],
      ['tool_call', 1],
      ['model_call', 2],
    ]);
    const summaryCall = events[0]!.payload as { request: { messages: Array<{ content: string }> }; response: { content: string } };
    expect(summaryCall.request.messages[0]!.content).toBe(promptTexts('en').summarizerSystem);
    expect(summaryCall.response.content).toBe('SUMMARY');

    // The same history on another thread, then the replay of r2: no model, tools from the recording.
    const replayed = world('');
    await replayed.run('B', 'r1b', 'hi', scripted(FIRST));
    const session = new ReplaySession('r2', 'recorded', events, silentLogger());
    const out = await replayed.run('B', 'r2b', 'second question', replayModel(session), session);
    expect(session.report()).toEqual({ of: 'r2', tools: 'recorded', diverged: false });
    expect(replayed.executed).toEqual(['r1b']);
    const essence = (ms: typeof out.messages) => ms.map((m) => [m.getType(), m.content]);
    expect(essence(out.messages)).toEqual(essence(original.messages));
  });

  it('re-executing a tool that now answers differently reports the tool result and goes on from the recording', async () => {
    const recorded = world('');
    const store = await recordingStore();
    await recorded.run(
      'A',
      'r1',
      'hi',
      scripted([{ tool_calls: [{ name: 'echo', args: { q: 1 } }] }, { content: 'done' }]),
      new RunRecorder(store, { tenantId: 't1', runId: 'r1' }, silentLogger()),
    );
    const events = await store.listRecordingEvents('t1', 'r1');
    const changed = world('-v2');
    const session = new ReplaySession('r1', 'execute', events, silentLogger());
    const out = await changed.run('B', 'r1b', 'hi', replayModel(session), session);
    expect(session.report()).toMatchObject({
      diverged: true,
      at: { step: 0, kind: 'tool_result', expected: { content: 'echo:{"q":1}' }, actual: { content: 'echo-v2:{"q":1}' } },
    });
    expect(out.messages.at(-1)!.content).toBe('done');
  });
});
