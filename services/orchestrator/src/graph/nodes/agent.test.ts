import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { ScriptedChatModel, type ScriptedTurn } from '../../models/scripted.js';
import type { ModelSlot } from '../../models/registry.js';
import { config, fakeCtx, runContextOf, sharedEn, stateOf } from '../testing.js';
import type { RunContext } from '../state.js';
import { agentNode, postProcess, promptBuilder, routeModel, toOpenAiTools, visibleTools, type AgentDeps } from './agent.js';

const spec = (name: string) =>
  create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });

function deps(ctx: RunContext, listTools: AgentDeps['tools']['listTools'] = async () => [spec('echo')]): AgentDeps {
  return { ...runContextOf(ctx), tools: { listTools, execute: async () => ({ content: '', isError: false }) } };
}

/** A step lease that counts how many model calls were made without holding the CPU slot. */
function countingLease() {
  const lease = { idled: 0, idle: async <T>(f: () => Promise<T>) => (lease.idled++, f()) };
  return lease;
}

describe('agent node, alone', () => {
  it('calls the model outside the CPU slot with the visible tools, and counts the loop and its usage', async () => {
    const model = new ScriptedChatModel([{ content: 'hello' }] satisfies ScriptedTurn[]);
    const lease = countingLease();
    const ctx = fakeCtx({ stepLease: lease }, model);
    const out = await agentNode(deps(ctx), sharedEn())(stateOf([new HumanMessage('hi')], { loops: 2 }), config);
    expect(lease.idled).toBe(1);
    expect(out.loops).toBe(3);
    expect(out.run_usage).toMatchObject({ run_id: ctx.runId, model_calls: 1 });
    const ai = out.messages[0] as AIMessage;
    expect(ai.content).toBe('hello');
    expect(ai.response_metadata).toMatchObject({ agentloop_model: 'scripted', agentloop_route: 'scripted' });
  });

  it('still answers with the local tools when the tool list is unavailable', async () => {
    const ctx = fakeCtx();
    const tools = await visibleTools(
      deps(ctx, async () => Promise.reject(new Error('no runner'))),
      sharedEn(),
      stateOf([new HumanMessage('hi')]),
      ctx,
    );
    expect(tools.visible.map((s) => s.name)).toEqual(['todo_write', 'todo_read', 'ask_human']);
  });

  it('offers no ask_human to a delegated agent, and delegate_task when an agent is @mentioned', async () => {
    const ctx = fakeCtx();
    const tools = await visibleTools(deps(ctx), sharedEn(), stateOf([new HumanMessage('ask @general')], { parent_context: 'p' }), ctx);
    expect(tools.visible.map((s) => s.name)).toEqual(['todo_write', 'todo_read', 'echo', 'delegate_task']);
  });

  it('builds the system prompt from state system messages and the todo reminder, without storing it', async () => {
    const ctx = fakeCtx();
    const state = stateOf([new SystemMessage('be brief'), new HumanMessage('hi')], {
      todos: [{ id: '1', content: 'write tests', status: 'pending', priority: 'medium' }],
    });
    const tools = await visibleTools(deps(ctx), sharedEn(), state, ctx);
    const input = promptBuilder({}, sharedEn(), state, tools)(state.messages);
    expect(input.system).toContain('be brief');
    expect(input.system).toContain('write tests');
    expect(input.history.some((m: BaseMessage) => SystemMessage.isInstance(m))).toBe(false);
  });

  it('routes to the run config preference over the state one', () => {
    const slots: ModelSlot[] = [];
    const model = new ScriptedChatModel([]);
    const router = {
      configured: new Set<ModelSlot>(['base', 'code']),
      forSlot: (s: ModelSlot) => (slots.push(s), { model, label: s, provider: 'scripted' as const, modelId: s }),
    };
    const { decision, resolved } = routeModel(stateOf([], { model_pref: 'base' }), fakeCtx({ router, modelPref: 'code' }), []);
    expect(decision).toEqual({ slot: 'code', reason: 'preference' });
    expect(resolved.label).toBe('code');
    expect(slots).toEqual(['code']);
  });

  it('gives repeated tool call ids fresh ones before anything keys on them', () => {
    const r = new AIMessage({
      content: '',
      tool_calls: [
        { name: 'a', args: {}, id: 'x', type: 'tool_call' },
        { name: 'b', args: {}, id: 'x', type: 'tool_call' },
      ],
    });
    const ctx = fakeCtx();
    const ai = postProcess(ctx, r, ctx.model, { slot: 'base', reason: 'default' });
    const ids = (ai.tool_calls ?? []).map((tc) => tc.id);
    expect(new Set(ids).size).toBe(2);
  });
});

describe('toOpenAiTools', () => {
  const withSchema = (name: string, parametersJsonSchema: string) =>
    create(ToolSpecSchema, { name, description: name, parametersJsonSchema, metadata: create(ToolMetadataSchema, {}) });

  it('parses each schema text once and gives later calls the same object', () => {
    const text = '{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}';
    const [first] = toOpenAiTools([withSchema('read_file', text)]);
    const [again] = toOpenAiTools([withSchema('read_file', text)]);
    expect(first!.function.parameters).toEqual({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] });
    expect(again!.function.parameters).toBe(first!.function.parameters);
  });

  it('offers an open object schema for a schema that is not a JSON object', () => {
    const tools = toOpenAiTools([withSchema('a', 'not json'), withSchema('b', '3'), withSchema('c', 'null')]);
    expect(tools.map((t) => t.function.parameters)).toEqual([{ type: 'object' }, { type: 'object' }, { type: 'object' }]);
  });
});
