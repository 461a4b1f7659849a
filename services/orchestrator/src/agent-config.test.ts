import { describe, expect, it, vi } from 'vitest';
import { HumanMessage } from '@langchain/core/messages';
import type { Command } from '@langchain/langgraph';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { agentPolicyOf, allowedSkills, offeredTools, tightenVerdict } from './agent-config.js';
import { AgentConfigurable, agentConfigJsonSchema } from './agent-config-schema.js';
import { basePrompt } from './prompts.js';
import type { ApprovalCall, ApprovalVerdict } from './approval-client.js';
import { aiCalling, config, fakeCtx, runContextOf, sharedEn, stateOf } from './graph/testing.js';
import { promptBuilder, visibleTools, type AgentDeps } from './graph/nodes/agent.js';
import { approveNode, type ApproveDeps } from './graph/nodes/approve.js';
import type { ApprovalEntry, RunContext } from './graph/state.js';

const tool = (name: string, mcpServer?: string) =>
  create(ToolSpecSchema, {
    name,
    description: name,
    parametersJsonSchema: '{"type":"object"}',
    metadata: create(ToolMetadataSchema, mcpServer ? { category: 'mcp', tags: [mcpServer] } : {}),
  });

const verdict = (action: ApprovalVerdict['action']): ApprovalVerdict => ({ action, reason: 'rules', risk_level: 'medium', rule: 'r1' });

describe('agentPolicyOf', () => {
  it('reads the configurable keys; no configurable is the open policy', () => {
    const p = agentPolicyOf({
      configurable: {
        system_prompt: 'You review SQL.',
        tools: ['read_file'],
        skills: ['pdf'],
        mcp_servers: ['github'],
        require_approval: ['write_file'],
        other: 1,
      },
    });
    expect(p.instructions).toBe('You review SQL.');
    expect([...p.tools!]).toEqual(['read_file']);
    expect([...p.skills!]).toEqual(['pdf']);
    expect([...p.mcpServers!]).toEqual(['github']);
    expect([...p.requireApproval]).toEqual(['write_file']);
    expect(agentPolicyOf({})).toMatchObject({ instructions: null, tools: null, skills: null, mcpServers: null });
  });

  it('fails the run naming the field when a policy key is malformed (never silently loosened)', () => {
    expect(() => agentPolicyOf({ configurable: { require_approval: 'write_file' } })).toThrow(/config\.configurable\.require_approval/);
    expect(() => agentPolicyOf({ configurable: { max_loops: 501 } })).toThrow(/config\.configurable\.max_loops/);
  });

  it('validates a configurable once: the same or an equal config gives the same policy, a malformed one fails every time', () => {
    const parse = vi.spyOn(AgentConfigurable, 'safeParse');
    try {
      const config = { configurable: { tools: ['read_file'], model: { slot: 'base' } } };
      const first = agentPolicyOf(config);
      expect(agentPolicyOf(config)).toBe(first);
      // Another object with the same configurable (the executor parses a run's stored config more than once).
      expect(agentPolicyOf({ configurable: { tools: ['read_file'], model: { slot: 'base' } } })).toBe(first);
      expect(parse).toHaveBeenCalledTimes(1);
      const other = agentPolicyOf({ configurable: { tools: ['write_file'], model: { slot: 'base' } } });
      expect(other).not.toBe(first);
      expect([...other.tools!]).toEqual(['write_file']);
      const bad = { configurable: { tools: 'read_file' } };
      expect(() => agentPolicyOf(bad)).toThrow(/config\.configurable\.tools/);
      expect(() => agentPolicyOf({ configurable: { tools: 'read_file' } })).toThrow(/config\.configurable\.tools/);
      // A value JSON cannot carry is still validated (and refused) rather than failing to stringify.
      expect(() => agentPolicyOf({ configurable: { max_tokens_total: 10n } } as never)).toThrow(/config\.configurable\.max_tokens_total/);
    } finally {
      parse.mockRestore();
    }
  });
});

describe('offeredTools and allowedSkills', () => {
  const specs = [tool('read_file'), tool('shell'), tool('github_issue', 'github'), tool('jira_ticket', 'jira')];

  it('keeps tools named in `tools` and MCP tools of servers in `mcp_servers`', () => {
    const p = agentPolicyOf({ configurable: { tools: ['read_file'], mcp_servers: ['jira'] } });
    expect(offeredTools(specs, p).map((s) => s.name)).toEqual(['read_file', 'jira_ticket']);
  });

  it('offers everything when no allow-list is given, and MCP tools are not governed by `tools`', () => {
    expect(offeredTools(specs, agentPolicyOf({})).map((s) => s.name)).toEqual(['read_file', 'shell', 'github_issue', 'jira_ticket']);
    expect(offeredTools(specs, agentPolicyOf({ configurable: { tools: [] } })).map((s) => s.name)).toEqual(['github_issue', 'jira_ticket']);
  });

  it('narrows skills to the allow-list', () => {
    expect([...allowedSkills(new Set(['pdf', 'xlsx']), agentPolicyOf({ configurable: { skills: ['xlsx', 'missing'] } }))]).toEqual(['xlsx']);
    expect([...allowedSkills(new Set(['pdf']), agentPolicyOf({}))]).toEqual(['pdf']);
  });
});

describe('tightenVerdict', () => {
  const policy = agentPolicyOf({ configurable: { require_approval: ['write_file', 'shell'], skills: ['pdf'] } });

  it('asks a human for a listed tool the rules allow', () => {
    expect(tightenVerdict(verdict('allow'), { name: 'write_file', args: {} }, policy)).toMatchObject({
      action: 'require_approval',
      rule: 'assistant:require_approval',
    });
    expect(tightenVerdict(verdict('allow'), { name: 'read_file', args: {} }, policy).action).toBe('allow');
  });

  it('never loosens: a denied call stays denied, one already needing approval keeps its rule', () => {
    expect(tightenVerdict(verdict('deny'), { name: 'shell', args: {} }, policy)).toEqual(verdict('deny'));
    expect(tightenVerdict(verdict('require_approval'), { name: 'shell', args: {} }, policy)).toEqual(verdict('require_approval'));
  });

  it('denies a call to a tool outside `tools` the model was not offered, but not an MCP tool', () => {
    const narrow = agentPolicyOf({ configurable: { tools: ['read_file'] } });
    expect(tightenVerdict(verdict('allow'), { name: 'shell', args: {} }, narrow)).toMatchObject({ action: 'deny', rule: 'assistant:tools' });
    expect(tightenVerdict(verdict('allow'), { name: 'read_file', args: {} }, narrow).action).toBe('allow');
    expect(tightenVerdict(verdict('allow'), { name: 'gh_pr', args: {} }, narrow, { mcp: true }).action).toBe('allow');
  });

  it('denies a skill outside the allow-list, by either skill tool', () => {
    expect(tightenVerdict(verdict('allow'), { name: 'skill', args: { skill: 'xlsx' } }, policy)).toMatchObject({ action: 'deny', rule: 'assistant:skills' });
    expect(tightenVerdict(verdict('allow'), { name: 'run_skill_script', args: { skill_id: 'xlsx', script_name: 'x' } }, policy).action).toBe('deny');
    expect(tightenVerdict(verdict('allow'), { name: 'skill', args: { skill: 'pdf' } }, policy).action).toBe('allow');
  });
});

describe('the agent graph honours the configuration', () => {
  const runWith = (configurable: Record<string, unknown>): RunContext => fakeCtx({ runConfig: { configurable } });
  const agentDeps = (ctx: RunContext): AgentDeps => ({
    ...runContextOf(ctx),
    tools: { listTools: async () => [tool('echo'), tool('shell'), tool('gh_pr', 'github')], execute: async () => ({ content: '', isError: false }) },
  });

  it('offers the model only the allowed tools and puts the instructions after the base prompt', async () => {
    const ctx = runWith({ system_prompt: 'You are the release manager.', tools: ['echo', 'todo_read'] });
    const state = stateOf([new HumanMessage('hi')]);
    const tools = await visibleTools(agentDeps(ctx), sharedEn(), state, ctx);
    expect(tools.visible.map((s) => s.name)).toEqual(['todo_read', 'echo', 'gh_pr']);
    const system = promptBuilder({}, sharedEn(), state, tools)(state.messages).system;
    expect(system.startsWith(basePrompt('en'))).toBe(true);
    expect(system.indexOf('You are the release manager.')).toBeGreaterThanOrEqual(basePrompt('en').length);
  });

  it('the approve node asks a human for a require_approval tool the rules allow, and keeps a deny', async () => {
    const checked: string[] = [];
    const approvals = {
      async check(call: ApprovalCall): Promise<ApprovalVerdict> {
        checked.push(call.toolName);
        return verdict(call.toolName === 'shell' ? 'deny' : 'allow');
      },
      async record() {},
    };
    const ctx = runWith({ require_approval: ['echo', 'shell'] });
    const node = approveNode({ ...runContextOf(ctx), approvals, tools: {} } as unknown as ApproveDeps, sharedEn());
    const cmd = (await node(stateOf([aiCalling({ name: 'echo', id: 'a' }, { name: 'shell', id: 'b' })]), config)) as Command;
    const entries = (cmd.update as { approvals: Record<string, ApprovalEntry> }).approvals;
    expect(checked.sort()).toEqual(['echo', 'shell']);
    expect(cmd.goto).toEqual(['await_approval']);
    expect(entries.a).toMatchObject({ action: 'require_approval', rule: 'assistant:require_approval', tool: 'echo' });
    expect(entries.b).toMatchObject({ action: 'deny', decision: 'denied', by: 'rules' });
  });
});

describe('agentConfigJsonSchema', () => {
  it('publishes the configurable keys with their limits', () => {
    const schema = agentConfigJsonSchema() as { properties: { configurable: { properties: Record<string, Record<string, unknown>> } } };
    const props = schema.properties.configurable.properties;
    expect(Object.keys(props)).toEqual(
      expect.arrayContaining(['system_prompt', 'model', 'model_pref', 'max_loops', 'tools', 'skills', 'mcp_servers', 'require_approval', 'delegates']),
    );
    expect(props.max_loops).toMatchObject({ type: 'integer', minimum: 1, maximum: 500 });
    expect(props.system_prompt).toMatchObject({ type: 'string', maxLength: 32768 });
  });
});
