import { describe, expect, it } from 'vitest';
import type { Command } from '@langchain/langgraph';
import { aiCalling, config, fakeApprovals, fakeCtx, runContextOf, sharedEn, stateOf } from '../testing.js';
import type { ApprovalEntry } from '../state.js';
import { approveNode, type ApproveDeps } from './approve.js';

const result = (cmd: unknown) => {
  const c = cmd as Command;
  return { goto: c.goto, approvals: (c.update as { approvals: Record<string, ApprovalEntry> }).approvals };
};

describe('approve node, alone', () => {
  it('goes to tools when every call is allowed; local tools are not asked about', async () => {
    const approvals = fakeApprovals({});
    const node = approveNode({ ...runContextOf(fakeCtx()), approvals, tools: {} } as ApproveDeps, sharedEn());
    const out = result(await node(stateOf([aiCalling({ name: 'echo', id: 'a' }, { name: 'todo_read', id: 'b' })]), config));
    expect(approvals.checked.map((c) => c.toolName)).toEqual(['echo']);
    expect(out.goto).toEqual(['tools']);
    expect(out.approvals.a).toMatchObject({ action: 'allow', tool: 'echo' });
  });

  it('waits for a human on require_approval, and records what the rules deny', async () => {
    const approvals = fakeApprovals({ rm: 'require_approval', curl: 'deny' });
    const node = approveNode({ ...runContextOf(fakeCtx()), approvals, tools: {} } as ApproveDeps, sharedEn());
    const out = result(await node(stateOf([aiCalling({ name: 'rm', id: 'a' }, { name: 'curl', id: 'b' })]), config));
    expect(out.goto).toEqual(['await_approval']);
    expect(out.approvals.a!.decision).toBeUndefined();
    expect(out.approvals.b).toMatchObject({ decision: 'denied', by: 'rules' });
    expect(approvals.recorded).toEqual([{ tool: 'curl', decision: 'denied', by: 'rules' }]);
  });

  it('denies what would need a human in a delegated agent', async () => {
    const approvals = fakeApprovals({ rm: 'require_approval' });
    const node = approveNode({ ...runContextOf(fakeCtx()), approvals, tools: {} } as ApproveDeps, sharedEn());
    const out = result(await node(stateOf([aiCalling({ name: 'rm', id: 'a' })], { parent_context: 'p' }), config));
    expect(out.goto).toEqual(['tools']);
    expect(out.approvals.a).toMatchObject({ action: 'require_approval', decision: 'denied' });
  });

  it('fails closed when the service does not answer', async () => {
    const approvals = fakeApprovals({ echo: new Error('down') });
    const node = approveNode({ ...runContextOf(fakeCtx()), approvals, tools: {} } as ApproveDeps, sharedEn());
    const out = result(await node(stateOf([aiCalling({ name: 'echo', id: 'a' })]), config));
    expect(out.approvals.a).toMatchObject({ action: 'unavailable', decision: 'unavailable', reason: 'down' });
  });

  it("gives the rules where a write really lands and an append's preceding text", async () => {
    const approvals = fakeApprovals({});
    const inspected: Array<[string, number | undefined]> = [];
    const tools = {
      async inspectPath(_t: string, _th: string, p: string, o: { tailBytes?: number } = {}) {
        inspected.push([p, o.tailBytes]);
        return { relativePath: 'uploads/x', exists: true, tail: 'end of file' };
      },
    };
    const node = approveNode({ ...runContextOf(fakeCtx()), approvals, tools } as ApproveDeps, sharedEn());
    await node(stateOf([aiCalling({ name: 'write_file', id: 'a', args: { file_path: '/ws/uploads/x', append: true } })]), config);
    expect(inspected).toEqual([['/ws/uploads/x', 4096]]);
    expect(approvals.checked[0]).toMatchObject({ resolvedPaths: { file_path: 'uploads/x' }, precedingText: 'end of file' });
  });
});
