import { z } from 'zod';
import type { Logger } from '@agentloop/core';
import { create, ToolMetadataSchema, ToolSpecSchema, type ToolSpec } from '@agentloop/proto';
import { ToolArgumentsError } from './errors.js';
import type { Workspace } from './workspace.js';

/** Descriptive data of a tool (seed 000 §2.4), sent with its spec. */
export interface ToolMetadata {
  category: string;
  tags: readonly string[];
  /** Running it twice has no additional effect: safe to retry. */
  idempotent: boolean;
  displayName: string;
  availableToSubagent: boolean;
}

/** What a tool gets besides its arguments. */
export interface ToolContext {
  /** The calling thread's workspace; resolve every model-supplied path through it. */
  workspace: Workspace;
  /** Aborted when the call's budget (request deadline) runs out; the result is then discarded. */
  signal: AbortSignal;
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
  execute(args: z.output<S>, ctx: ToolContext): Promise<string>;
}

/** Identity helper that infers `args` from the schema. */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}

/** Names a model API accepts for a function (OpenAI: ^[a-zA-Z0-9_-]{1,64}$). */
const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

interface Entry {
  def: ToolDefinition;
  spec: ToolSpec;
}

/**
 * The tools this replica can run. Today: the built-in tools. Later issues add
 * discovered custom tool modules and per-tenant registered/visible tiers; they
 * register here, and `specs()` / `get()` are where tier filtering will apply.
 */
export class ToolRegistry {
  private readonly entries = new Map<string, Entry>();

  /** Adds a tool. Throws on an invalid or duplicate name, or a schema that is not an object. */
  register<S extends z.ZodType>(def: ToolDefinition<S>): this {
    if (!TOOL_NAME_PATTERN.test(def.name)) throw new Error(`Invalid tool name "${def.name}": expected ${TOOL_NAME_PATTERN.source}`);
    if (this.entries.has(def.name)) throw new Error(`Tool "${def.name}" is already registered`);
    const generic: ToolDefinition = def;
    this.entries.set(def.name, { def: generic, spec: buildSpec(generic) });
    return this;
  }

  unregister(name: string): boolean {
    return this.entries.delete(name);
  }

  get(name: string): ToolDefinition | undefined {
    return this.entries.get(name)?.def;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Wire specs, in registration order. */
  specs(): ToolSpec[] {
    return [...this.entries.values()].map((e) => e.spec);
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

function buildSpec(def: ToolDefinition): ToolSpec {
  const schema = argumentsJsonSchema(def.schema);
  if (schema.type !== 'object') throw new Error(`Tool "${def.name}": the arguments schema must be an object`);
  return create(ToolSpecSchema, {
    name: def.name,
    description: def.description,
    parametersJsonSchema: JSON.stringify(schema),
    metadata: create(ToolMetadataSchema, {
      category: def.metadata.category,
      tags: [...def.metadata.tags],
      idempotent: def.metadata.idempotent,
      displayName: def.metadata.displayName,
      availableToSubagent: def.metadata.availableToSubagent,
    }),
  });
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
