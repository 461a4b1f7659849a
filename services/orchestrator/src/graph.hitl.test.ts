import { describe, expect, it } from 'vitest';
import { Command, MemorySaver } from '@langchain/langgraph';
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { silentLogger } from '@agentloop/core';
import { buildAgentGraph, TOOL_APPROVAL_INTERRUPT, USER_INPUT_INTERRUPT, type RunContext } from './graph.js';
import { ScriptedChatModel, type ScriptedTurn } from './models/scripted.js';
import type { ToolCallInput, ToolCallResult } from './tool-client.js';
import type { ApprovalCall, ApprovalVerdict, HumanDecision } from './approval-client.js';
import { humanInterrupts } from './run-executor.js';

const spec = (name: string) =>
  create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });

/** Rules of the approval peer in these tests: by tool name. */
type Rules = Record<string, ApprovalVerdict['action'] | 'unavailable'>;

function harness(rules: Rules, opts: { parentContext?: string; recordFails?: boolean } = {}) {
  const executed: ToolCallInput[] = [];
  const checked: ApprovalCall[] = [];
  const recorded: Array<{ tool: string; decision: HumanDecision; by: string; comment: string; approver?: { tenantId: string; keyId: string } }> = [];
  const inspected: Array<{ path: string; tailBytes: number }> = [];
  const tools = {
    async listTools() {
      return [spec('write_file'), spec('http_fetch'), spec('now')];
    },
    async execute(call: ToolCallInput): Promise<ToolCallResult> {
      executed.push(call);
      return { content: `ran ${call.name}`, isError: false };
    },
    /** The tool-runner's view: the workspace is /ws; notes.txt ends with "pass". */
    async inspectPath(_tenant: string, _thread: string, filePath: string, o: { tailBytes?: number } = {}) {
      inspected.push({ path: filePath, tailBytes: o.tailBytes ?? 0 });
      if (filePath.startsWith('/etc')) return { refused: 'Path outside workspace' };
      const relativePath = filePath.replace(/^\/ws\//, '').replace(/^\.\//, '');
      return { relativePath, exists: relativePath === 'outputs/notes.txt', tail: relativePath === 'outputs/notes.txt' && o.tailBytes ? 'pass' : '' };
    },
  };
  const approvals = {
    async check(call: ApprovalCall): Promise<ApprovalVerdict> {
      checked.push(call);
      const action = rules[call.toolName] ?? 'allow';
      if (action === 'unavailable') throw new Error('no responders');
      return {
        action,
        reason: action === 'allow' ? '' : `rule for ${call.toolName}`,
        risk_level: action === 'allow' ? 'unspecified' : 'high',
        rule: `tool:${call.toolName}:high_risk`,
      };
    },
    async record(call: ApprovalCall, _v: ApprovalVerdict, decision: HumanDecision, by: string, comment = '', approver?: { tenantId: string; keyId: string }) {
      if (opts.recordFails) throw new Error('audit store down');
      recorded.push({ tool: call.toolName, decision, by, comment, ...(approver ? { approver } : {}) });
    },
  };
  const seen: BaseMessage[][] = [];
  const start = async (turns: ScriptedTurn[]) => {
    const model = new ScriptedChatModel(turns);
    const orig = model._generate.bind(model);
    model._generate = async (msgs, o) => {
      seen.push(msgs);
      return orig(msgs, o);
    };
    const ctx: RunContext = {
      runId: 'r1',
      tenantId: 't1',
      threadId: 'th1',
      model: { model, label: 'scripted', provider: 'scripted', modelId: 'scripted' },
      logger: silentLogger(),
      signal: new AbortController().signal,
      apiKeyId: 'key_0123456789ab',
    };
    const graph = buildAgentGraph({ tools, approvals, checkpointer: new MemorySaver(), runContext: () => ctx });
    const config = { configurable: { thread_id: 't1:th1', run_id: 'r1' }, recursionLimit: 200 };
    await graph.invoke({ messages: [new HumanMessage('go')], loops: 0, max_loops: 20, parent_context: opts.parentContext ?? null }, config);
    const pending = async () => humanInterrupts(await graph.getState(config)).map((i) => i.value as Record<string, unknown>);
    const resume = async (value: unknown) => {
      await graph.invoke(new Command({ resume: value }), config);
    };
    const messages = async () => (await graph.getState(config)).values.messages as BaseMessage[];
    return { graph, config, pending, resume, messages };
  };
  return { executed, checked, recorded, inspected, seen, start };
}

const toolMessages = (ms: BaseMessage[]) => ms.filter((m) => ToolMessage.isInstance(m)).map((m) => [(m as ToolMessage).name, m.content]);

describe('tool approval (seed 001 §7.3)', () => {
  it('checks every bus tool call and runs the allowed ones without stopping', async () => {
    const h = harness({});
    const r = await h.start([
      {
        tool_calls: [
          { name: 'now', args: {} },
          { name: 'write_file', args: { file_path: 'outputs/a.txt', content: 'x' } },
        ],
      },
      { content: 'done' },
    ]);
    expect(await r.pending()).toEqual([]);
    expect(h.checked.map((c) => [c.toolName, c.args])).toEqual([
      ['now', {}],
      ['write_file', { file_path: 'outputs/a.txt', content: 'x' }],
    ]);
    expect(h.executed.map((c) => c.name)).toEqual(['now', 'write_file']);
  });

  it('suspends on a call that needs approval, runs nothing of the step, and runs it once approved', async () => {
    const h = harness({ http_fetch: 'require_approval' });
    const r = await h.start([
      {
        tool_calls: [
          { name: 'now', args: {} },
          { name: 'http_fetch', args: { url: 'https://api.example.com' } },
        ],
      },
      { content: 'done' },
    ]);
    const [ask] = await r.pending();
    expect(ask).toMatchObject({
      type: TOOL_APPROVAL_INTERRUPT,
      tool: 'http_fetch',
      args: { url: 'https://api.example.com' },
      reason: 'rule for http_fetch',
      risk_level: 'high',
      options: ['approve', 'reject'],
    });
    expect(h.executed).toEqual([]);
    await r.resume({ decision: 'approve', by: 'alice@example.com', comment: 'fine' });
    expect(await r.pending()).toEqual([]);
    expect(h.executed.map((c) => c.name)).toEqual(['now', 'http_fetch']);
    expect(h.recorded).toEqual([
      { tool: 'http_fetch', decision: 'approved', by: 'alice@example.com', comment: 'fine', approver: { tenantId: 't1', keyId: 'key_0123456789ab' } },
    ]);
    expect((await r.messages()).at(-1)!.content).toBe('done');
  });

  it('asks for each call in turn; a rejected call is answered with a cancel message the model sees, the approved one runs', async () => {
    const h = harness({ http_fetch: 'require_approval', write_file: 'require_approval' });
    const r = await h.start([
      {
        tool_calls: [
          { name: 'http_fetch', args: { url: 'https://a' } },
          { name: 'write_file', args: { file_path: 'uploads/x' } },
        ],
      },
      { content: 'ok, not writing' },
    ]);
    expect((await r.pending()).map((p) => p.tool)).toEqual(['http_fetch']);
    await r.resume('approve');
    expect((await r.pending()).map((p) => p.tool)).toEqual(['write_file']);
    expect(h.executed).toEqual([]);
    await r.resume('reject');
    expect(h.executed.map((c) => c.name)).toEqual(['http_fetch']);
    expect(toolMessages(await r.messages())).toEqual([
      ['http_fetch', 'ran http_fetch'],
      ['write_file', 'Operation cancelled by the user: rule for write_file. Do not retry it; continue another way or ask the user.'],
    ]);
    expect(h.recorded.map((x) => [x.tool, x.decision, x.by])).toEqual([
      ['http_fetch', 'approved', 'tenant:t1'],
      ['write_file', 'rejected', 'tenant:t1'],
    ]);
  });

  it('asks again when the answer is not understood', async () => {
    const h = harness({ http_fetch: 'require_approval' });
    const r = await h.start([{ tool_calls: [{ name: 'http_fetch', args: {} }] }, { content: 'done' }]);
    await r.resume('maybe?');
    const [again] = await r.pending();
    expect(again).toMatchObject({ type: TOOL_APPROVAL_INTERRUPT, tool: 'http_fetch', error: expect.stringContaining('Unrecognized answer') });
    expect(h.executed).toEqual([]);
    await r.resume(true);
    expect(h.executed.map((c) => c.name)).toEqual(['http_fetch']);
  });

  it('a denied call is not run, is recorded, and the model reads why', async () => {
    const h = harness({ write_file: 'deny' });
    const r = await h.start([{ tool_calls: [{ name: 'write_file', args: {} }] }, { content: 'done' }]);
    expect(await r.pending()).toEqual([]);
    expect(h.executed).toEqual([]);
    expect(toolMessages(await r.messages())).toEqual([['write_file', 'Error: write_file was not run: the approval policy denies it (rule for write_file).']]);
    expect(h.recorded.map((x) => [x.tool, x.decision, x.by])).toEqual([['write_file', 'denied', 'rules']]);
  });

  it('fails closed: without a verdict the call is not run', async () => {
    const h = harness({ write_file: 'unavailable' });
    const r = await h.start([
      {
        tool_calls: [
          { name: 'write_file', args: {} },
          { name: 'now', args: {} },
        ],
      },
      { content: 'done' },
    ]);
    expect(h.executed.map((c) => c.name)).toEqual(['now']);
    expect(toolMessages(await r.messages())[0]).toEqual([
      'write_file',
      'Error: write_file was not run: no approval decision could be obtained (no responders).',
    ]);
  });

  it('an approval that cannot be audited does not run the call', async () => {
    const h = harness({ http_fetch: 'require_approval' }, { recordFails: true });
    const r = await h.start([{ tool_calls: [{ name: 'http_fetch', args: {} }] }, { content: 'done' }]);
    await r.resume('approve');
    expect(h.executed).toEqual([]);
    expect(toolMessages(await r.messages())[0]?.[1]).toContain('could not be recorded in the audit trail');
  });

  it('a delegated agent cannot ask: a call needing approval is refused', async () => {
    const h = harness({ http_fetch: 'require_approval' }, { parentContext: 'parent-run' });
    const r = await h.start([{ tool_calls: [{ name: 'http_fetch', args: {} }] }, { content: 'done' }]);
    expect(await r.pending()).toEqual([]);
    expect(h.executed).toEqual([]);
    expect(toolMessages(await r.messages())[0]?.[1]).toContain('which a delegated agent cannot ask for');
  });
});

describe('ask_human (seed 001 §7.2)', () => {
  it('suspends with the question and returns the answer as the tool result', async () => {
    const h = harness({});
    const r = await h.start([
      { tool_calls: [{ name: 'ask_human', args: { question: 'Which city?', context: 'For the hotel', default: 'Beijing' } }] },
      { content: 'Booking in Shanghai' },
    ]);
    expect(await r.pending()).toEqual([
      { type: USER_INPUT_INTERRUPT, tool_call_id: expect.any(String), question: 'Which city?', context: 'For the hotel', default: 'Beijing', required: true },
    ]);
    await r.resume('Shanghai');
    expect(toolMessages(await r.messages())).toEqual([['ask_human', 'Shanghai']]);
    expect((await r.messages()).at(-1)!.content).toBe('Booking in Shanghai');
    expect(h.checked).toEqual([]);
  });

  it('uses the default for an empty answer and accepts {answer}', async () => {
    const h = harness({});
    const r = await h.start([
      { tool_calls: [{ name: 'ask_human', args: { question: 'Days to keep?', default: '7' } }] },
      { tool_calls: [{ name: 'ask_human', args: { question: 'Confirm?' } }] },
      { content: 'done' },
    ]);
    await r.resume('');
    await r.resume({ answer: 'yes' });
    expect(toolMessages(await r.messages())).toEqual([
      ['ask_human', '7'],
      ['ask_human', 'yes'],
    ]);
  });

  it('is refused to delegated agents and for a call without a question', async () => {
    const sub = harness({}, { parentContext: 'p' });
    const r1 = await sub.start([{ tool_calls: [{ name: 'ask_human', args: { question: 'x?' } }] }, { content: 'done' }]);
    expect(await r1.pending()).toEqual([]);
    expect(toolMessages(await r1.messages())[0]?.[1]).toContain('not available to delegated agents');
    const h = harness({});
    const r2 = await h.start([{ tool_calls: [{ name: 'ask_human', args: { question: '  ' } }] }, { content: 'done' }]);
    expect(toolMessages(await r2.messages())[0]?.[1]).toContain('"question" must be a non-empty string');
  });

  it('two calls sharing one tool-call id are checked one by one: the risky one still stops the run (issue 18)', async () => {
    const h = harness({ write_file: 'require_approval' });
    const r = await h.start([
      {
        tool_calls: [
          { id: 'same', name: 'write_file', args: { file_path: 'outputs/a.txt', content: 'password=hunter2' } },
          { id: 'same', name: 'now', args: {} },
        ],
      },
      { content: 'done' },
    ]);
    expect(h.checked.map((c) => c.toolName).sort()).toEqual(['now', 'write_file']);
    expect(new Set(h.checked.map((c) => c.toolCallId)).size).toBe(2);
    expect((await r.pending()).map((p) => p.tool)).toEqual(['write_file']);
    expect(h.executed).toEqual([]);
    await r.resume('reject');
    expect(h.executed.map((c) => c.name)).toEqual(['now']);
  });

  it('never runs calls that share an id when they reach the tools step anyway (fail closed)', async () => {
    const h = harness({});
    const r = await h.start([{ content: 'hello' }, { content: 'unused' }, { content: 'after' }]);
    const { AIMessage } = await import('@langchain/core/messages');
    await r.graph.updateState(
      r.config,
      {
        messages: [
          new AIMessage({
            content: '',
            tool_calls: [
              { id: 'dup', name: 'write_file', args: { file_path: 'outputs/a.txt', content: 'x' } },
              { id: 'dup', name: 'now', args: {} },
            ],
          }),
        ],
      },
      'agent',
    );
    await r.graph.invoke(null, r.config);
    expect(h.executed).toEqual([]);
    const shown = toolMessages(await r.messages());
    expect(shown).toHaveLength(2);
    for (const [, content] of shown) expect(String(content)).toMatch(/tool call id "dup" is used by another call/);
  });

  it('sends the rules the resolved workspace path of a write and the end of the file an append extends', async () => {
    const h = harness({});
    await h.start([
      {
        tool_calls: [
          { name: 'write_file', args: { file_path: '/ws/uploads/report.pdf', content: 'x' } },
          { name: 'write_file', args: { file_path: 'outputs/notes.txt', content: 'word=hunter2', append: true } },
          { name: 'write_file', args: { file_path: '/etc/passwd', content: 'x' } },
        ],
      },
      { content: 'done' },
    ]);
    const byPath = new Map(h.checked.map((c) => [(c.args as { file_path: string }).file_path, c]));
    expect(byPath.get('/ws/uploads/report.pdf')).toMatchObject({ resolvedPaths: { file_path: 'uploads/report.pdf' } });
    expect(byPath.get('/ws/uploads/report.pdf')).not.toHaveProperty('precedingText');
    expect(byPath.get('outputs/notes.txt')).toMatchObject({ resolvedPaths: { file_path: 'outputs/notes.txt' }, precedingText: 'pass' });
    // A path the tool-runner refuses: the rules judge the raw path (and the tool refuses it).
    expect(byPath.get('/etc/passwd')).not.toHaveProperty('resolvedPaths');
    expect(h.inspected.find((i) => i.path === 'outputs/notes.txt')?.tailBytes).toBe(4096);
  });

  it('records the server-set approver (tenant, API key id) beside the label the client typed', async () => {
    const h = harness({ http_fetch: 'require_approval' });
    const r = await h.start([{ tool_calls: [{ name: 'http_fetch', args: { url: 'https://a' } }] }, { content: 'done' }]);
    await r.resume({ decision: 'approve', by: 'admin@corp' });
    expect(h.recorded).toEqual([
      { tool: 'http_fetch', decision: 'approved', by: 'admin@corp', comment: '', approver: { tenantId: 't1', keyId: 'key_0123456789ab' } },
    ]);
  });
});
