import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { aiCalling, stateOf } from './testing.js';
import { routeAfterAgent, routeAfterDelegate, routeAfterTools, routeStart } from './edges.js';

const approvals = { check: async () => ({ action: 'allow' as const, reason: '', risk_level: 'low' as const, rule: '' }), record: async () => {} };

describe('routers', () => {
  it('START: /compact goes to compact, anything else to the agent', () => {
    expect(routeStart(stateOf([new HumanMessage('/compact')]))).toBe('compact');
    expect(routeStart(stateOf([new HumanMessage('hi')]))).toBe('agent');
  });

  it('after the agent: finalize without calls or at the loop limit; approve only bus calls when approvals are on', () => {
    expect(routeAfterAgent({})(stateOf([new AIMessage('done')]))).toBe('finalize');
    expect(routeAfterAgent({})(stateOf([aiCalling({ name: 'echo' })], { loops: 5, max_loops: 5 }))).toBe('finalize');
    expect(routeAfterAgent({})(stateOf([aiCalling({ name: 'echo' })]))).toBe('tools');
    expect(routeAfterAgent({ approvals })(stateOf([aiCalling({ name: 'echo' })]))).toBe('approve');
    expect(routeAfterAgent({ approvals })(stateOf([aiCalling({ name: 'todo_read' })]))).toBe('tools');
  });

  it('after tools: pending delegate_task → delegate (only with delegation on), pending ask_human → human, else agent', () => {
    const both = stateOf([aiCalling({ name: 'delegate_task', id: 'd' }, { name: 'ask_human', id: 'h' })]);
    expect(routeAfterTools({ delegation: { maxDepth: 1, maxParallel: 2 } })(both)).toBe('delegate');
    expect(routeAfterTools({})(both)).toBe('human');
    const answered = stateOf([aiCalling({ name: 'ask_human', id: 'h' }), new ToolMessage({ content: 'x', tool_call_id: 'h' })]);
    expect(routeAfterDelegate(answered)).toBe('agent');
  });
});
