import { describe, expect, it } from 'vitest';
import { Command } from '@langchain/langgraph';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ToolEffect } from '@agentloop/store';
import type { ToolCallInput, ToolCallResult } from '../../tool-client.js';
import { aiCalling, config, fakeCtx, runContextOf, sharedEn, stateOf } from '../testing.js';
import type { ApprovalEntry } from '../state.js';
import { toolsNode, type ToolsDeps } from './tools.js';

function fakeToolClient(idempotent: string[] = []) {
  const executed: ToolCallInput[] = [];
  return {
    executed,
    async listTools() {
      return [];
    },
    async execute(call: ToolCallInput): Promise<ToolCallResult> {
      executed.push(call);
      return { content: `ran ${call.name}`, isError: false };
    },
    isIdempotent: (name: string) => idempotent.includes(name),
  };
}

/** An in-memory effect ledger that records which calls were claimed and completed. */
function fakeLedger() {
  const effects = new Map<string, ToolEffect>();
  const claimed: string[] = [];
  const completed: string[] = [];
  return {
    claimed,
    completed,
    effects,
    async claimToolEffect(key: { tenantId: string; threadId: string; runId: string; toolCallId: string; toolName: string }) {
      claimed.push(key.toolCallId);
      const prior = effects.get(key.toolCallId);
      if (prior) return { effect: prior, created: false };
      const effect: ToolEffect = { ...key, state: 'started', content: null, isError: false, executions: 1, createdAt: new Date(), updatedAt: new Date() };
      effects.set(key.toolCallId, effect);
      return { effect, created: true };
    },
    async restartToolEffect() {},
    async completeToolEffect(_t: string, _r: string, id: string, result: { content: string; isError: boolean }) {
      completed.push(id);
      const e = effects.get(id)!;
      if (e.state !== 'completed') Object.assign(e, { state: 'completed', ...result });
      return e;
    },
  };
}

const contents = (cmd: unknown) => ((cmd as Command).update as { messages: ToolMessage[] }).messages.map((m) => [m.tool_call_id, m.content, m.status]);

describe('tools node, alone', () => {
  it('records side-effecting calls in the ledger and runs idempotent ones without it', async () => {
    const tools = fakeToolClient(['read_file']);
    const ledger = fakeLedger();
    const node = toolsNode({ ...runContextOf(fakeCtx()), tools, ledger } as ToolsDeps, sharedEn());
    const out = await node(stateOf([new HumanMessage('go'), aiCalling({ name: 'write_file', id: 'w' }, { name: 'read_file', id: 'r' })]), config);
    expect(tools.executed.map((c) => c.toolCallId).sort()).toEqual(['r', 'w']);
    expect(ledger.claimed).toEqual(['w']);
    expect(ledger.completed).toEqual(['w']);
    expect(contents(out)).toEqual([
      ['w', 'ran write_file', 'success'],
      ['r', 'ran read_file', 'success'],
    ]);
  });

  it('answers a side-effecting call from the ledger instead of running it again', async () => {
    const tools = fakeToolClient();
    const ledger = fakeLedger();
    const node = toolsNode({ ...runContextOf(fakeCtx()), tools, ledger } as ToolsDeps, sharedEn());
    const state = stateOf([new HumanMessage('go'), aiCalling({ name: 'write_file', id: 'w' })]);
    await node(state, config);
    const again = await node(state, config);
    expect(tools.executed).toHaveLength(1);
    expect(contents(again)).toEqual([['w', 'ran write_file', 'success']]);
  });

  it('runs no call whose id another call of the message shares', async () => {
    const tools = fakeToolClient();
    const node = toolsNode({ ...runContextOf(fakeCtx()), tools } as ToolsDeps, sharedEn());
    const out = await node(stateOf([aiCalling({ name: 'a', id: 'x' }, { name: 'b', id: 'x' })]), config);
    expect(tools.executed).toHaveLength(0);
    expect(contents(out).map((c) => c[2])).toEqual(['error', 'error']);
  });

  it('with approvals on, runs only calls allowed or approved', async () => {
    const tools = fakeToolClient();
    const entry = (over: Partial<ApprovalEntry>): ApprovalEntry => ({ action: 'allow', reason: 'r', risk_level: 'low', rule: '', tool: 't', ...over });
    const approvals = { check: async () => entry({}), record: async () => {} };
    const node = toolsNode({ ...runContextOf(fakeCtx()), tools, approvals } as ToolsDeps, sharedEn());
    const state = stateOf([aiCalling({ name: 'ok', id: 'a' }, { name: 'yes', id: 'b' }, { name: 'no', id: 'c' }, { name: 'never', id: 'd' })], {
      approvals: {
        a: entry({}),
        b: entry({ action: 'require_approval', decision: 'approved' }),
        c: entry({ action: 'require_approval', decision: 'rejected' }),
      },
    });
    const out = await node(state, config);
    expect(tools.executed.map((c) => c.toolCallId).sort()).toEqual(['a', 'b']);
    expect(contents(out).map((c) => [c[0], c[2]])).toEqual([
      ['a', 'success'],
      ['b', 'success'],
      ['c', 'error'],
      ['d', 'error'],
    ]);
  });

  it('runs todo_write locally and writes the todo list with its ToolMessage', async () => {
    const tools = fakeToolClient();
    const node = toolsNode({ ...runContextOf(fakeCtx()), tools } as ToolsDeps, sharedEn());
    const out = (await node(stateOf([aiCalling({ name: 'todo_write', id: 't', args: { todos: [{ content: 'x', status: 'pending' }] } })]), config)) as Command;
    expect(tools.executed).toHaveLength(0);
    const update = out.update as { messages: ToolMessage[]; todos?: unknown[] };
    expect(update.messages.map((m) => m.tool_call_id)).toEqual(['t']);
    expect(update.todos).toHaveLength(1);
  });

  it("runs an approver's edit with the edited arguments", async () => {
    const tools = fakeToolClient();
    const approvals = { check: async () => ({ action: 'allow' as const, reason: '', risk_level: 'low' as const, rule: '' }), record: async () => {} };
    const edited: ApprovalEntry = {
      action: 'require_approval',
      reason: 'risky',
      risk_level: 'high',
      rule: 'r',
      tool: 'write_file',
      decision: 'approved',
      edited_args: { file_path: 'b.txt' },
    };
    const node = toolsNode({ ...runContextOf(fakeCtx()), tools, approvals } as ToolsDeps, sharedEn());
    await node(stateOf([aiCalling({ name: 'write_file', id: 'w', args: { file_path: 'a.txt' } })], { approvals: { w: edited } }), config);
    expect(tools.executed.map((c) => c.args)).toEqual([{ file_path: 'b.txt' }]);
  });
});
