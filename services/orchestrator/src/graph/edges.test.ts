import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { END } from '@langchain/langgraph';
import { aiCalling, stateOf } from './testing.js';
import type { ApprovalEntry } from './state.js';
import { routeAfterAgent, routeAfterDelegate, routeAfterTools, routeStart } from './edges.js';

const entry = (action: ApprovalEntry['action']): ApprovalEntry => ({ action, reason: '', risk_level: 'low', rule: '', tool: 'x' });
const approvals = { check: async () => ({ action: 'allow' as const, reason: '', risk_level: 'low' as const, rule: '' }), record: async () => {} };

describe('routers', () => {
  it('START: /compact goes to compact, anything else to the agent', () => {
    expect(routeStart(stateOf([new HumanMessage('/compact')]))).toBe('compact');
    expect(routeStart(stateOf([new HumanMessage('hi')]))).toBe('agent');
  });

  it('after the agent: END on an answer, finalize when forced, tools when approvals are off or only local tools are called', () => {
    expect(routeAfterAgent({})(stateOf([new AIMessage('done')]))).toBe(END);
    expect(routeAfterAgent({ approvals })(stateOf([new AIMessage('done')]))).toBe(END);
    expect(routeAfterAgent({})(stateOf([aiCalling({ name: 'echo' })], { loops: 5, max_loops: 5 }))).toBe('finalize');
    expect(routeAfterAgent({ approvals })(stateOf([aiCalling({ name: 'echo' })], { loops: 5, max_loops: 5 }))).toBe('finalize');
    expect(routeAfterAgent({})(stateOf([aiCalling({ name: 'echo' })]))).toBe('tools');
    expect(routeAfterAgent({ approvals })(stateOf([aiCalling({ name: 'todo_read' })]))).toBe('tools');
  });

  it('after the agent with approvals on: by the verdicts written with the calls; approve when a call has none', () => {
    const route = routeAfterAgent({ approvals });
    const calls = [aiCalling({ name: 'echo', id: 'a' }, { name: 'rm', id: 'b' }, { name: 'todo_read', id: 'c' })];
    expect(route(stateOf(calls, { approvals: { a: entry('allow'), b: entry('allow') } }))).toBe('tools');
    expect(route(stateOf(calls, { approvals: { a: entry('allow'), b: { ...entry('deny'), decision: 'denied', by: 'rules' } } }))).toBe('tools');
    expect(route(stateOf(calls, { approvals: { a: entry('allow'), b: entry('require_approval') } }))).toBe('await_approval');
    expect(route(stateOf(calls, { approvals: { a: entry('allow'), b: { ...entry('require_approval'), decision: 'approved' } } }))).toBe('tools');
    // A verdict missing (a client wrote the history, which clears them): judged by the approve node.
    expect(route(stateOf(calls, { approvals: { a: entry('allow') } }))).toBe('approve');
    expect(route(stateOf(calls))).toBe('approve');
  });

  it('after tools: pending delegate_task → delegate (only with delegation on), pending ask_human → human, else agent', () => {
    const both = stateOf([aiCalling({ name: 'delegate_task', id: 'd' }, { name: 'ask_human', id: 'h' })]);
    expect(routeAfterTools({ delegation: { maxDepth: 1, maxParallel: 2 } })(both)).toBe('delegate');
    expect(routeAfterTools({})(both)).toBe('human');
    const answered = stateOf([aiCalling({ name: 'ask_human', id: 'h' }), new ToolMessage({ content: 'x', tool_call_id: 'h' })]);
    expect(routeAfterDelegate(answered)).toBe('agent');
  });
});
