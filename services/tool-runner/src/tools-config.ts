import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '@agentloop/core';
import { parseDocument } from 'yaml';
import { z } from 'zod';

/** Names a model API accepts for a function (OpenAI: ^[a-zA-Z0-9_-]{1,64}$). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** One tool's settings in tools.yaml (seed 000 §2.3). Every field is optional. */
export const ToolConfigEntry = z.strictObject({
  /** optional section only (core tools are always enabled); default false there. */
  enabled: z.boolean().optional(),
  /** Persistent: listed in every context, sub-agents included (seed 000 §2.5). */
  available_to_subagent: z.boolean().optional(),
  category: z.string().trim().min(1).optional(),
  tags: z.array(z.string().trim().min(1)).optional(),
  /** Replaces the description the model reads. */
  description: z.string().trim().min(1).optional(),
});
export type ToolConfigEntry = z.infer<typeof ToolConfigEntry>;

// `now:` with nothing below it is YAML null: a tool listed with no overrides.
const Section = z.record(z.string(), ToolConfigEntry.nullable()).default({});

/** tools.yaml: `core` (always enabled) and `optional` (enabled per entry) sections. */
export const ToolsConfigFile = z.strictObject({ core: Section, optional: Section }).superRefine((file, ctx) => {
  for (const section of ['core', 'optional'] as const) {
    for (const [name, entry] of Object.entries(file[section])) {
      if (!TOOL_NAME_PATTERN.test(name)) {
        ctx.addIssue({ code: 'custom', path: [section, name], message: `invalid tool name (expected ${TOOL_NAME_PATTERN.source})` });
      }
      if (section === 'core' && entry?.enabled === false) {
        ctx.addIssue({ code: 'custom', path: [section, name, 'enabled'], message: `core tools are always enabled; move ${name} to optional to disable it` });
      }
      if (section === 'optional' && name in file.core) {
        ctx.addIssue({ code: 'custom', path: [section, name], message: `${name} is listed under both core and optional` });
      }
    }
  }
});
export type ToolsConfigFile = z.infer<typeof ToolsConfigFile>;

/** Settings of one configured tool, as the registry applies them. */
export interface ToolSettings {
  section: 'core' | 'optional';
  enabled: boolean;
  availableToSubagent?: boolean;
  category?: string;
  tags?: readonly string[];
  description?: string;
}

/** A validated tools.yaml. */
export interface ToolsConfig {
  /** File it was read from ("" for the empty configuration). */
  source: string;
  tools: ReadonlyMap<string, ToolSettings>;
}

export const EMPTY_TOOLS_CONFIG: ToolsConfig = { source: '', tools: new Map() };

/** tools.yaml is wrong: the message names the file and each bad field. */
export class ToolsConfigError extends ConfigError {
  override name = 'ToolsConfigError';
}

/** The tools.yaml shipped with this package (src/ and dist/ are both one level below it). */
export const DEFAULT_TOOLS_CONFIG_PATH = fileURLToPath(new URL('../config/tools.yaml', import.meta.url));

/** Parses tools.yaml text. Throws ToolsConfigError, e.g. "optional.http_fetch.enabled: expected boolean". */
export function parseToolsConfig(text: string, source: string): ToolsConfig {
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) {
    const lines = doc.errors.map((e) => `  ${e.linePos?.[0] ? `line ${e.linePos[0].line}: ` : ''}${e.message.split('\n')[0] ?? ''}`);
    throw new ToolsConfigError(`Invalid tools config ${source}:\n${lines.join('\n')}`);
  }
  const raw: unknown = doc.toJS() ?? {};
  const parsed = ToolsConfigFile.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      if (i.code === 'unrecognized_keys') {
        const at = i.path.map(String);
        const allowed = at.length === 0 ? 'core, optional' : 'enabled, available_to_subagent, category, tags, description';
        return i.keys.map((k) => `  ${[...at, k].join('.')}: unknown field (expected one of ${allowed})`).join('\n');
      }
      return `  ${i.path.map(String).join('.') || '(root)'}: ${i.message}`;
    });
    throw new ToolsConfigError(`Invalid tools config ${source}:\n${lines.join('\n')}`);
  }
  const tools = new Map<string, ToolSettings>();
  for (const section of ['core', 'optional'] as const) {
    for (const [name, entry] of Object.entries(parsed.data[section])) {
      const e = entry ?? {};
      tools.set(name, {
        section,
        enabled: section === 'core' ? true : (e.enabled ?? false),
        ...(e.available_to_subagent !== undefined ? { availableToSubagent: e.available_to_subagent } : {}),
        ...(e.category !== undefined ? { category: e.category } : {}),
        ...(e.tags !== undefined ? { tags: e.tags } : {}),
        ...(e.description !== undefined ? { description: e.description } : {}),
      });
    }
  }
  return { source, tools };
}

/** Reads and validates a tools.yaml. Throws ToolsConfigError (missing file included). */
export async function loadToolsConfig(file: string): Promise<ToolsConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ToolsConfigError(`Cannot read tools config ${file}: ${code === 'ENOENT' ? 'file not found' : String(code ?? err)}`, { cause: err });
  }
  return parseToolsConfig(text, file);
}
