import { z } from 'zod';
import type { Logger } from '@agentloop/core';
import { create, ToolMetadataSchema, ToolSpecSchema, type ToolSpec } from '@agentloop/proto';
import { ToolArgumentsError } from './errors.js';
import { EMPTY_TOOLS_CONFIG, TOOL_NAME_PATTERN, type ToolSettings, type ToolsConfig } from './tools-config.js';
import type { Workspace } from '@agentloop/workspace';

/** Descriptive data of a tool (seed 000 §2.4), sent with its spec. tools.yaml may override it. */
export interface ToolMetadata {
  category: string;
  tags: readonly string[];
  /** Running it twice has no additional effect: safe to retry. See also ToolDefinition.isIdempotent. */
  idempotent: boolean;
  displayName: string;
  /** Persistent when enabled: listed in every context, sub-agents included (seed 000 §2.5). */
  availableToSubagent: boolean;
  /** Whether the tool is enabled when tools.yaml does not list it (default true). */
  enabled?: boolean;
}

/** What a tool gets besides its arguments. */
export interface ToolContext {
  /** The calling thread's workspace; resolve every model-supplied path through it. */
  workspace: Workspace;
  /**
   * Aborted when the call's budget (request deadline) runs out; the result is
   * then discarded. Pass it to every wait and every filesystem walk.
   */
  signal: AbortSignal;
  /** When the call's budget ends (epoch ms): bound requests made on its behalf by it. */
  deadline: number;
  /** Child logger carrying tool, tenant, thread_id, run_id, tool_call_id. */
  logger: Logger;
  tenantId: string;
  threadId: string;
  runId: string;
  toolCallId: string;
}

/**
 * A tool: a zod schema for its arguments (its JSON Schema is derived from it)
 * and an `execute` returning the text handed to the model. Throw a ToolError
 * for a failure the model should read; anything else is reported as
 * "Unexpected error: <Name>: <message>".
 */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly schema: S;
  readonly metadata: ToolMetadata;
  /**
   * JSON Schema shown to the model instead of the one derived from `schema`
   * (tools declared with a JSON Schema; `schema` then only validates).
   */
  readonly parametersJsonSchema?: Record<string, unknown>;
  /**
   * false: the tool never reads or writes the thread's workspace, so a call does not create it
   * (a run that only calls such tools does no folder work, issue 9) and `ctx.workspace` throws.
   * Default true: a tool that may write somewhere must leave it so.
   */
  readonly usesWorkspace?: boolean;
  /** Per-call idempotency when it depends on the arguments (http_fetch: GET and HEAD only). */
  isIdempotent?(args: z.output<S>): boolean;
  execute(args: z.output<S>, ctx: ToolContext): Promise<string>;
}

/** Identity helper that infers `args` from the schema. */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}

/** Where a tool comes from: registered in code, or a module found in a tool directory. */
export type ToolOrigin = { kind: 'builtin' } | { kind: 'module'; file: string };

/** One discovered tool as the registry sees it after tools.yaml is applied. */
export interface ToolRecord {
  readonly def: ToolDefinition;
  readonly origin: ToolOrigin;
  /** Registered tier: enabled by tools.yaml (or by default when unlisted). */
  readonly enabled: boolean;
  /** Metadata with the tools.yaml overrides. */
  readonly metadata: ToolMetadata;
  readonly description: string;
  readonly spec: ToolSpec;
}

/** A module tool the registry refused, or a module that yielded none. */
export interface SkippedTool {
  source: string;
  reason: string;
}

/** What the caller's context asks for (seed 000 §2.6). */
export interface VisibilityRequest {
  /** Tools the active skill allows: looked up among enabled tools. */
  allowed?: readonly string[];
  /** @mentioned names: looked up among all discovered tools (on-demand loading). */
  mentioned?: readonly string[];
  /** Sub-agent context: only tools available_to_subagent. */
  subagent?: boolean;
}

export interface VisibleTools {
  /** Persistent, then allowed, then mentioned; each name once. */
  records: ToolRecord[];
  /** Requested names that matched nothing usable here. */
  notFound: string[];
}

interface Base {
  def: ToolDefinition;
  origin: ToolOrigin;
  /** JSON Schema of the arguments, validated once. */
  parameters: string;
}

/**
 * The three tiers of seed 000 §2.1:
 * - discovered: every tool known here (built-in and from tool modules), disabled ones included;
 * - registered: the enabled ones (tools.yaml `core`, `optional` with enabled: true, or unlisted);
 * - visible: computed per request by `visible()` — persistent + allowed + mentioned.
 * Module tools and the configuration are swapped atomically by `replaceModules` / `applyConfig`,
 * so a reload never shows a half-loaded set.
 */
export class ToolRegistry {
  private readonly builtins = new Map<string, Base>();
  private modules = new Map<string, Base>();
  private config: ToolsConfig = EMPTY_TOOLS_CONFIG;
  private records = new Map<string, ToolRecord>();

  /** Adds a tool in code. Throws on an invalid or duplicate name, or a schema that is not an object. */
  register<S extends z.ZodType>(def: ToolDefinition<S>): this {
    if (!TOOL_NAME_PATTERN.test(def.name)) throw new Error(`Invalid tool name "${def.name}": expected ${TOOL_NAME_PATTERN.source}`);
    if (this.builtins.has(def.name) || this.modules.has(def.name)) throw new Error(`Tool "${def.name}" is already registered`);
    const generic = def as unknown as ToolDefinition;
    this.builtins.set(def.name, { def: generic, origin: { kind: 'builtin' }, parameters: parametersOf(generic) });
    this.rebuild();
    return this;
  }

  unregister(name: string): boolean {
    const removed = this.builtins.delete(name) || this.modules.delete(name);
    if (removed) this.rebuild();
    return removed;
  }

  /**
   * Replaces every module tool at once (a reload), and the configuration with
   * them when given. Tools whose name is taken (by a built-in or an earlier
   * module) or invalid are skipped with a reason.
   */
  replaceModules(
    tools: readonly { def: ToolDefinition; file: string; exportName?: string }[],
    config?: ToolsConfig,
  ): { loaded: string[]; skipped: SkippedTool[] } {
    const next = new Map<string, Base>();
    const skipped: SkippedTool[] = [];
    for (const t of tools) {
      const source = t.exportName ? `${t.file}#${t.exportName}` : t.file;
      if (!TOOL_NAME_PATTERN.test(t.def.name)) {
        skipped.push({ source, reason: `invalid tool name "${t.def.name}" (expected ${TOOL_NAME_PATTERN.source})` });
        continue;
      }
      const clash = this.builtins.has(t.def.name) ? 'a built-in tool' : next.get(t.def.name);
      if (clash) {
        skipped.push({
          source,
          reason: `tool name "${t.def.name}" is already taken by ${typeof clash === 'string' ? clash : clash.origin.kind === 'module' ? clash.origin.file : 'another tool'}`,
        });
        continue;
      }
      try {
        next.set(t.def.name, { def: t.def, origin: { kind: 'module', file: t.file }, parameters: parametersOf(t.def) });
      } catch (err) {
        skipped.push({ source, reason: err instanceof Error ? err.message : String(err) });
      }
    }
    this.modules = next;
    if (config) this.config = config;
    this.rebuild();
    return { loaded: [...next.keys()], skipped };
  }

  /** Applies a tools.yaml. Returns the configured names that match no discovered tool. */
  applyConfig(config: ToolsConfig): string[] {
    this.config = config;
    this.rebuild();
    return [...config.tools.keys()].filter((n) => !this.records.has(n));
  }

  get toolsConfig(): ToolsConfig {
    return this.config;
  }

  /** A registered (enabled) tool. */
  get(name: string): ToolDefinition | undefined {
    const r = this.records.get(name);
    return r?.enabled ? r.def : undefined;
  }

  /** A discovered tool, enabled or not. */
  lookup(name: string): ToolRecord | undefined {
    return this.records.get(name);
  }

  /** Whether the tool is registered (enabled). */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Registered tool names: built-ins in registration order, then module tools. */
  names(): string[] {
    return this.registered().map((r) => r.def.name);
  }

  /** Wire specs of the registered tools. */
  specs(): ToolSpec[] {
    return this.registered().map((r) => r.spec);
  }

  /** Every discovered tool, disabled ones included. */
  discovered(): ToolRecord[] {
    return [...this.records.values()];
  }

  registered(): ToolRecord[] {
    return this.discovered().filter((r) => r.enabled);
  }

  /** Enabled tools that are available_to_subagent: listed in every context (seed 000 §2.5). */
  persistent(): ToolRecord[] {
    return this.registered().filter((r) => r.metadata.availableToSubagent);
  }

  /**
   * The visible tier (seed 000 §2.6): persistent tools, then `allowed` (among
   * enabled tools), then `mentioned` (among all discovered tools), each once,
   * in that order. A sub-agent sees only tools available_to_subagent.
   */
  visible(req: VisibilityRequest = {}): VisibleTools {
    const records: ToolRecord[] = [];
    const seen = new Set<string>();
    const notFound: string[] = [];
    const usable = (r: ToolRecord | undefined): r is ToolRecord => r !== undefined && (!req.subagent || r.metadata.availableToSubagent);
    const add = (r: ToolRecord) => {
      if (seen.has(r.def.name)) return;
      seen.add(r.def.name);
      records.push(r);
    };
    for (const r of this.persistent()) add(r);
    const step = (names: readonly string[] | undefined, find: (n: string) => ToolRecord | undefined) => {
      for (const name of names ?? []) {
        if (seen.has(name)) continue;
        const r = find(name);
        if (usable(r)) add(r);
        else if (!notFound.includes(name)) notFound.push(name);
      }
    };
    step(req.allowed, (n) => {
      const r = this.records.get(n);
      return r?.enabled ? r : undefined;
    });
    step(req.mentioned, (n) => this.records.get(n));
    return { records, notFound };
  }

  /** Whether this call may be repeated safely (the tool's rule for these arguments, else its metadata). */
  isIdempotent(def: ToolDefinition, args: unknown): boolean {
    if (def.isIdempotent) {
      try {
        return def.isIdempotent(args);
      } catch {
        return false;
      }
    }
    return this.records.get(def.name)?.metadata.idempotent ?? def.metadata.idempotent;
  }

  /** Recomputes the records (config overlay) and swaps them in one assignment. */
  private rebuild(): void {
    const next = new Map<string, ToolRecord>();
    for (const base of [...this.builtins.values(), ...this.modules.values()]) next.set(base.def.name, effective(base, this.config.tools.get(base.def.name)));
    this.records = next;
  }

  /**
   * Parses JSON arguments against the tool's schema. Throws ToolArgumentsError:
   * "Invalid arguments for <tool>: <field>: <problem>".
   */
  parseArgs(def: ToolDefinition, argsJson: string): unknown {
    let raw: unknown = {};
    if (argsJson.trim() !== '') {
      try {
        raw = JSON.parse(argsJson);
      } catch (err) {
        throw new ToolArgumentsError(def.name, `arguments are not valid JSON (${err instanceof Error ? err.message : String(err)})`);
      }
    }
    const parsed = def.schema.safeParse(raw);
    if (!parsed.success) throw new ToolArgumentsError(def.name, formatIssues(parsed.error.issues));
    return parsed.data;
  }
}

/** JSON Schema of the arguments a model sends (zod input side, so defaults are optional). */
export function argumentsJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const js = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  // Some providers reject unknown top-level keywords in function parameters.
  delete js.$schema;
  return js;
}

/** Validates and serializes the arguments schema (once per tool). */
function parametersOf(def: ToolDefinition): string {
  const schema = def.parametersJsonSchema ?? argumentsJsonSchema(def.schema);
  if (schema.type !== 'object') throw new Error(`Tool "${def.name}": the arguments schema must be an object`);
  return JSON.stringify(schema);
}

function effective(base: Base, settings: ToolSettings | undefined): ToolRecord {
  const { def } = base;
  const metadata: ToolMetadata = {
    category: settings?.category ?? def.metadata.category,
    tags: settings?.tags ?? def.metadata.tags,
    idempotent: def.metadata.idempotent,
    displayName: def.metadata.displayName,
    availableToSubagent: settings?.availableToSubagent ?? def.metadata.availableToSubagent,
  };
  const enabled = settings ? settings.enabled : (def.metadata.enabled ?? true);
  const description = settings?.description ?? def.description;
  const spec = create(ToolSpecSchema, {
    name: def.name,
    description,
    parametersJsonSchema: base.parameters,
    metadata: create(ToolMetadataSchema, {
      category: metadata.category,
      tags: [...metadata.tags],
      idempotent: metadata.idempotent,
      displayName: metadata.displayName,
      availableToSubagent: metadata.availableToSubagent,
      enabled,
    }),
  });
  return { def, origin: base.origin, enabled, metadata, description, spec };
}

function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((i) => {
      const field = i.path.length > 0 ? i.path.map(String).join('.') : '(arguments)';
      const message = i.code === 'invalid_type' && /received undefined$/.test(i.message) ? `required (expected ${i.expected})` : i.message;
      return `${field}: ${message}`;
    })
    .join('; ');
}
