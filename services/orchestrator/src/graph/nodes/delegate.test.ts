import { describe, expect, it } from 'vitest';
import { Command } from '@langchain/langgraph';
import type { ToolMessage } from '@langchain/core/messages';
import { DELEGATION_INTERRUPT, type DelegationRequest } from '../../delegation.js';
import { aiCalling, aloneInGraph, config, fakeCtx, runContextOf, sharedEn, stateOf } from '../testing.js';
import { delegateNode } from './delegate.js';

const limits = { maxDepth: 1, maxParallel: 2 };

describe('delegate node, alone', () => {
  it('refuses every call past the depth limit, without suspending', () => {
    const node = delegateNode({ ...runContextOf(fakeCtx({ depth: 1 })), delegation: limits }, sharedEn());
    const out = node(stateOf([aiCalling({ name: 'delegate_task', id: 'd', args: { task: 'x' } })]), config) as { messages: ToolMessage[] };
    expect(out.messages.map((m) => [m.tool_call_id, m.status, m.content])).toEqual([['d', 'error', sharedEn().texts.delegateDepth(1)]]);
  });

  it('refuses invalid arguments and calls beyond maxParallel; suspends with the valid children; answers from the resume', async () => {
    const ctx = fakeCtx({ runConfig: {} });
    const { graph, config: cfg } = aloneInGraph(delegateNode({ ...runContextOf(ctx), delegation: limits }, sharedEn()));
    const ai = aiCalling(
      { name: 'delegate_task', id: 'a', args: { task: 'one' } },
      { name: 'delegate_task', id: 'b', args: {} },
      { name: 'delegate_task', id: 'c', args: { task: 'two' } },
      { name: 'delegate_task', id: 'd', args: { task: 'three' } },
    );
    const first = await graph.invoke(stateOf([ai]), cfg);
    const request = (first as { __interrupt__?: Array<{ value: DelegationRequest }> }).__interrupt__![0]!.value;
    expect(request.type).toBe(DELEGATION_INTERRUPT);
    expect(request.children.map((c) => [c.tool_call_id, c.task])).toEqual([
      ['a', 'one'],
      ['c', 'two'],
    ]);
    const out = await graph.invoke(
      new Command({ resume: { delegation_id: request.delegation_id, results: { a: { content: 'done one', is_error: false, status: 'success' } } } }),
      cfg,
    );
    const msgs = (out.messages as ToolMessage[]).filter((m) => m.getType() === 'tool');
    expect(msgs.map((m) => [m.tool_call_id, m.status])).toEqual([
      ['b', 'error'],
      ['d', 'error'],
      ['a', 'success'],
      ['c', 'error'],
    ]);
    expect(msgs[2]!.content).toBe('done one');
  });
});
