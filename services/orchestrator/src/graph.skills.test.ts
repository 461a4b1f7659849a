/**
 * The run's skills in the agent loop: the catalog in the system prompt, core skills preloaded,
 * `allowed-tools` of an active skill (not offered, and refused if called anyway), and the
 * environment's skills (seed 002).
 */
import { describe, expect, it } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { silentLogger } from '@agentloop/core';
import type { EnvironmentSettings, SkillCatalogEntry } from '@agentloop/skills';
import type { JsonObject } from '@agentloop/store';
import { buildAgentGraph, type RunContext } from './graph.js';
import { ScriptedChatModel, type ScriptedTurn } from './models/scripted.js';
import type { CatalogQuery } from './skills-client.js';
import type { ToolCallInput } from './tool-client.js';
import { catalogEntry } from './testing/catalog-entry.js';

const spec = (name: string) =>
  create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });

class RecordingModel extends ScriptedChatModel {
  bound: string[][] = [];
  descriptions: Array<Record<string, string>> = [];
  systems: string[] = [];
  override bindTools(tools?: unknown[]): this {
    const fns = (tools ?? []).map((t) => (t as { function: { name: string; description: string } }).function);
    this.bound.push(fns.map((f) => f.name));
    this.descriptions.push(Object.fromEntries(fns.map((f) => [f.name, f.description])));
    return this;
  }
  override async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']) {
    this.systems.push(String(messages[0]!.content));
    return super._generate(messages, options);
  }
}

const entry = catalogEntry;

function harness(catalog: (q: CatalogQuery) => SkillCatalogEntry[], opts: { failSkill?: boolean } = {}) {
  const calls: ToolCallInput[] = [];
  const loaded: string[] = [];
  const queries: CatalogQuery[] = [];
  const tools = {
    listTools: async () => [
      ...['read_file', 'write_file', 'http_fetch', 'run_skill_script'].map(spec),
      create(ToolSpecSchema, {
        name: 'skill',
        description: 'Execute a skill. Available skills:\n- docx: docx skill\n- pdf: pdf skill',
        parametersJsonSchema: '{"type":"object"}',
        metadata: create(ToolMetadataSchema, {}),
      }),
    ],
    execute: async (call: ToolCallInput) => {
      calls.push(call);
      if (opts.failSkill && call.name === 'skill') return { content: 'Error: Skill not found: pdf', isError: true, errorCode: 'NOT_FOUND' };
      return { content: `ran ${call.name}`, isError: false };
    },
  };
  const skills = {
    catalog: async (_tenant: string, q: CatalogQuery = {}) => {
      queries.push(q);
      return { environment: q.environment ?? null, settings: null, skills: catalog(q) };
    },
    load: async (_tenant: string, _thread: string, id: string) => {
      loaded.push(id);
      return `skills/${id}/SKILL.md`;
    },
  };
  const contexts = new Map<string, RunContext>();
  const graph = buildAgentGraph({ tools, skills, checkpointer: new MemorySaver(), runContext: (id) => contexts.get(id) });
  async function run(text: string, turns: ScriptedTurn[], runConfig?: JsonObject, environment?: EnvironmentSettings) {
    const model = new RecordingModel(turns);
    contexts.set('r1', {
      runId: 'r1',
      tenantId: 't1',
      threadId: 'th1',
      model: { model, label: 'scripted', provider: 'scripted', modelId: 'scripted' },
      logger: silentLogger(),
      signal: new AbortController().signal,
      ...(runConfig ? { runConfig } : {}),
      ...(environment ? { environment } : {}),
    });
    const out = await graph.invoke({ messages: [new HumanMessage(text)], loops: 0, context_id: 'r1' }, { configurable: { thread_id: 't1:th1', run_id: 'r1' } });
    const toolMessages = (out.messages as BaseMessage[]).filter((m): m is ToolMessage => ToolMessage.isInstance(m));
    return { model, toolMessages };
  }
  return { run, calls, loaded, queries };
}

describe('skills in the agent loop', () => {
  it('lists the catalog (name and description of each skill in it) in the system prompt, and preloads core skills', async () => {
    const h = harness(() => [
      entry('pdf', { name: 'PDF forms', description: 'Fill\nPDF forms.' }),
      entry('base', { core: true }),
      entry('hidden', { in_catalog: false }),
    ]);
    const { model } = await h.run('hello', [{ content: 'ok' }]);
    expect(model.systems[0]).toContain('# Available skills');
    expect(model.systems[0]).toContain('- pdf (PDF forms): Fill PDF forms. — skills/pdf/SKILL.md');
    expect(model.systems[0]).toContain('- base: base skill — skills/base/SKILL.md');
    expect(model.systems[0]).not.toContain('hidden');
    expect(h.loaded).toEqual(['base']);
  });

  it('while a skill with allowed-tools is active, other tools are not offered and a call to one is refused', async () => {
    const h = harness(() => [entry('pdf', { allowed_tools: ['Read', 'run_skill_script'] })]);
    const { model, toolMessages } = await h.run('fill the form', [
      { tool_calls: [{ name: 'skill', args: { skill: 'pdf' } }] },
      {
        tool_calls: [
          { name: 'http_fetch', args: { url: 'http://example.com' } },
          { name: 'read_file', args: { file_path: 'a' } },
        ],
      },
      { content: 'done' },
    ]);
    expect(model.bound[0]).toEqual(expect.arrayContaining(['read_file', 'write_file', 'http_fetch']));
    // After the skill loaded: Read (read_file), the skill tools and the planning tools only.
    expect(model.bound[1]!.filter((n) => !n.startsWith('todo_') && n !== 'ask_human').sort()).toEqual(['read_file', 'run_skill_script', 'skill']);
    expect(toolMessages[1]!.content).toBe(
      'Error: Tool http_fetch is not allowed while skill pdf is active (its allowed-tools: read_file, run_skill_script, skill). Use one of those tools instead.',
    );
    expect(toolMessages[1]!.status).toBe('error');
    expect(toolMessages[2]!.content).toBe('ran read_file');
    expect(h.calls.map((c) => c.name)).toEqual(['skill', 'read_file']);
  });

  it('a skill whose load failed is not active: it restricts nothing', async () => {
    const h = harness(() => [entry('pdf', { allowed_tools: ['read_file'] })], { failSkill: true });
    const { model } = await h.run('go', [{ tool_calls: [{ name: 'skill', args: { skill: 'pdf' } }] }, { content: 'ok' }]);
    expect(model.bound[1]).toContain('http_fetch');
  });

  it("an environment's catalog is asked for, and a skill outside it is refused", async () => {
    const h = harness((q) => (q.environment === 'legal' ? [entry('docx')] : [entry('docx'), entry('pdf')]));
    const { model, toolMessages } = await h.run('go', [{ tool_calls: [{ name: 'skill', args: { skill: 'pdf' } }] }, { content: 'ok' }], {
      configurable: { environment: 'legal' },
    });
    expect(h.queries[0]).toEqual({ environment: 'legal', subagent: false });
    expect(model.systems[0]).toContain('- docx: docx skill');
    expect(model.systems[0]).not.toContain('- pdf');
    // The skill tool lists the environment's skills only.
    expect(model.descriptions[0]!.skill).toBe('Execute a skill. Available skills:\n- docx: docx skill');
    expect(toolMessages[0]!.content).toBe('Error: Skill not found: pdf. Available skills in environment legal: docx');
    expect(h.calls).toEqual([]);
  });

  it("an environment's agents are the ones an @mention delegates to; its system prompt and tools apply", async () => {
    const h = harness(() => [entry('docx')]);
    const legal: EnvironmentSettings = {
      models: {},
      agents: ['researcher'],
      system_prompt: 'You work for the legal team.',
      tools: ['read_file', 'skill', 'delegate_task'],
    };
    const inLegal = await h.run('@researcher find the clause', [{ content: 'ok' }], { configurable: { environment: 'legal' } }, legal);
    expect(inLegal.model.systems[0]).toContain('You work for the legal team.');
    expect(inLegal.model.bound[0]!.sort()).toEqual(['delegate_task', 'read_file', 'skill']);
    // Another environment without that agent: the same @mention delegates nothing.
    const other: EnvironmentSettings = { models: {}, agents: ['translator'], system_prompt: null, tools: null };
    const inOther = await harness(() => [entry('docx')]).run(
      '@researcher find the clause',
      [{ content: 'ok' }],
      { configurable: { environment: 'dev' } },
      other,
    );
    expect(inOther.model.bound[0]).not.toContain('delegate_task');
    expect(inOther.model.bound[0]).toContain('http_fetch');
    expect(inOther.model.systems[0]).not.toContain('legal team');
  });
});
