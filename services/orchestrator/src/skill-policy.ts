/**
 * What the run's skills ask of the agent loop (docs/skills-ecosystem.md): the skills catalog in the
 * system prompt (seed 000 §3.6), which skills are active, and the tools their `allowed-tools`
 * (Agent Skills spec) leave to the run while they are.
 */
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { create, ToolSpecSchema, type ToolSpec } from '@agentloop/proto';
import { formatSkillCatalog, type SkillCatalogEntry } from '@agentloop/skills';
import { isLocalTool } from './local-tools.js';
import type { PromptLanguage } from './prompts.js';

/** The skill sandbox's tools: always left to a run, or an active skill could not be used at all. */
export const SKILL_TOOLS: readonly string[] = ['skill', 'run_skill_script'];

/**
 * Claude Code's tool names, which published skills write in `allowed-tools`, mapped to the tools
 * that do the same here; any other name is taken as an AgentLoop tool name.
 */
export const TOOL_ALIASES: Readonly<Record<string, string>> = {
  Read: 'read_file',
  Write: 'write_file',
  Glob: 'find_files',
  Grep: 'search_file',
  LS: 'list_workspace_files',
  WebFetch: 'http_fetch',
  WebSearch: 'web_search',
};

/** The tools active skills leave to the run, and which skills restrict it; null: no restriction. */
export interface ToolRestriction {
  allowed: ReadonlySet<string>;
  /** Ids of the active skills that declare `allowed-tools`. */
  skills: string[];
}

/**
 * Skills active in a run: its core skills, the @mentioned ones, and every skill the conversation
 * loaded with a successful `skill` call (the `skill` tool's answer is how a skill becomes active).
 */
export function activeSkills(messages: readonly BaseMessage[], opts: { core: readonly string[]; mentioned: readonly string[] }): string[] {
  const failed = new Set(messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m) && m.status === 'error').map((m) => m.tool_call_id));
  const loaded: string[] = [];
  for (const m of messages) {
    if (!AIMessage.isInstance(m)) continue;
    for (const tc of m.tool_calls ?? []) {
      const id = (tc.args as Record<string, unknown> | undefined)?.skill;
      if (tc.name === 'skill' && typeof id === 'string' && !failed.has(tc.id ?? '')) loaded.push(id.trim());
    }
  }
  return [...new Set([...opts.core, ...opts.mentioned, ...loaded])];
}

/**
 * The union of the `allowed-tools` of the active skills that declare it (plus the skill tools);
 * null when none does. A skill without `allowed-tools` restricts nothing.
 */
export function toolRestriction(active: readonly string[], catalog: readonly SkillCatalogEntry[]): ToolRestriction | null {
  const byId = new Map(catalog.map((s) => [s.id, s]));
  const restricting = active.map((id) => byId.get(id)).filter((s): s is SkillCatalogEntry => s?.allowed_tools != null);
  if (restricting.length === 0) return null;
  const allowed = new Set<string>(SKILL_TOOLS);
  for (const s of restricting) for (const t of s.allowed_tools ?? []) allowed.add(TOOL_ALIASES[t] ?? t);
  return { allowed, skills: restricting.map((s) => s.id) };
}

/**
 * Whether a tool stays available under the restriction. The orchestrator's own planning tools
 * (todo_*, ask_human, delegate_task) are part of the loop, not capabilities a skill grants: kept.
 */
export function toolAllowed(name: string, restriction: ToolRestriction | null): boolean {
  return restriction === null || restriction.allowed.has(name) || isLocalTool(name);
}

/** The message of a call refused because an active skill's `allowed-tools` does not list the tool. */
export function skillRefusal(name: string, restriction: ToolRestriction): string {
  const tools = [...restriction.allowed].sort().join(', ');
  return (
    `Error: Tool ${name} is not allowed while skill ${restriction.skills.join(', ')} is active ` +
    `(its allowed-tools: ${tools}). Use one of those tools instead.`
  );
}

const oneLine = (t: string) => t.replace(/\s+/g, ' ').trim();

/** An entry's line of the section, made once per entry object. */
const catalogLines = new WeakMap<SkillCatalogEntry, string>();

function catalogLine(s: SkillCatalogEntry): string {
  let line = catalogLines.get(s);
  if (line === undefined) {
    line = `- ${s.id}${s.name !== s.id ? ` (${oneLine(s.name)})` : ''}: ${oneLine(s.description)} — skills/${s.id}/SKILL.md`;
    catalogLines.set(s, line);
  }
  return line;
}

const CATALOG_HEAD: Record<PromptLanguage, string> = {
  zh: ['# 可用技能（Skills）', '技能是知识包（文档和脚本），不是工具。需要时用 `skill` 工具加载，然后阅读 `skills/<id>/SKILL.md` 并按其指导操作。', ''].join(
    '\n',
  ),
  en: [
    '# Available skills',
    'Skills are knowledge packages (instructions and scripts), not tools. When one fits the task, load it with the `skill` tool, ' +
      'then follow its `skills/<id>/SKILL.md` (run its scripts with run_skill_script).',
    '',
  ].join('\n'),
};

/**
 * The skills catalog section of the system prompt (seed 000 §3.6); '' when there is none. Built on
 * every model call from the catalog the skills client caches (the same entry objects for its
 * cache's lifetime), so each entry's line is made once: normalizing every description's
 * whitespace per call was ~0.05 ms of a 3-step run (bench/throughput profile).
 */
export function skillsCatalogSection(catalog: readonly SkillCatalogEntry[], language: PromptLanguage): string {
  const lines: string[] = [];
  for (const s of catalog) if (s.in_catalog) lines.push(catalogLine(s));
  if (lines.length === 0) return '';
  return `${CATALOG_HEAD[language]}\n${lines.join('\n')}`;
}

/** Where the skill sandbox's `skill` tool description starts its listing. */
const LISTING_MARK = 'Available skills:\n';

/**
 * The `skill` tool as an environment's run sees it: the sandbox lists the tenant's whole catalog in
 * its description; the listing is replaced by the environment's skills, so the model is not told
 * about skills it may not load. Other specs are returned as they are.
 */
export function scopeSkillTool(specs: readonly ToolSpec[], catalog: readonly SkillCatalogEntry[]): ToolSpec[] {
  return specs.map((s) => {
    const at = s.name === 'skill' ? s.description.indexOf(LISTING_MARK) : -1;
    if (at < 0) return s;
    const listing = formatSkillCatalog(catalog.filter((c) => c.in_catalog).map((c) => ({ id: c.id, name: c.name, description: c.description })));
    return create(ToolSpecSchema, { ...s, description: `${s.description.slice(0, at + LISTING_MARK.length)}${listing || '(none)'}` });
  });
}
