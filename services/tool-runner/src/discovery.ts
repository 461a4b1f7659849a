import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from '@agentloop/core';
import { z } from 'zod';
import type { SkippedTool, ToolContext, ToolDefinition, ToolMetadata } from './registry.js';

/** A tool found in a module, before the registry checks its name against the others. */
export interface ModuleTool {
  def: ToolDefinition;
  /** Absolute path of the module. */
  file: string;
  /** Export it came from (`SCHEMA` for the plain module form). */
  exportName: string;
}

export interface DiscoveryResult {
  tools: ModuleTool[];
  /** Modules (or single exports) that yielded no tool, with the reason. */
  skipped: SkippedTool[];
  /** Module files examined. */
  files: number;
}

export interface DiscoveryOptions {
  logger: Logger;
  /** A module whose import has not settled after this long is skipped (a hanging top-level await). */
  importTimeoutMs?: number;
  /** Also load .ts/.mts files (only when the process can import TypeScript: tsx, vitest). */
  typescript?: boolean;
}

/** This file is itself TypeScript when the process runs from source (tsx, vitest): .ts modules then import too. */
export const CAN_IMPORT_TYPESCRIPT = import.meta.url.endsWith('.ts');

const JS_EXTENSIONS = ['.js', '.mjs'];
const TS_EXTENSIONS = ['.ts', '.mts'];

/**
 * Remembers which module URL was imported for which content, so a reload
 * re-imports exactly the changed files (ESM caches a URL forever: the query
 * string carries a content hash) and retries files whose import failed.
 */
export class ModuleLoader {
  private attempt = 0;
  private readonly failed = new Set<string>();

  constructor(private readonly opts: DiscoveryOptions) {}

  /** Scans the directories (recursively, in name order) and imports every tool module. */
  async discover(dirs: readonly string[]): Promise<DiscoveryResult> {
    this.attempt++;
    const result: DiscoveryResult = { tools: [], skipped: [], files: 0 };
    for (const dir of dirs) {
      const abs = path.resolve(dir);
      let files: string[];
      try {
        files = await listModules(abs, this.opts.typescript ?? CAN_IMPORT_TYPESCRIPT);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const reason = code === 'ENOENT' ? 'tool directory not found' : `tool directory cannot be read (${code ?? String(err)})`;
        this.opts.logger.warn({ dir: abs }, reason);
        result.skipped.push({ source: abs, reason });
        continue;
      }
      for (const file of files) {
        result.files++;
        const { tools, skipped } = await this.loadFile(file);
        result.tools.push(...tools);
        result.skipped.push(...skipped);
      }
    }
    return result;
  }

  /** Imports one module and extracts its tools; never throws (load-time isolation). */
  async loadFile(file: string): Promise<{ tools: ModuleTool[]; skipped: SkippedTool[] }> {
    const log = this.opts.logger.child({ module: file });
    let mod: Record<string, unknown>;
    let url = '';
    try {
      const hash = createHash('sha256')
        .update(await readFile(file))
        .digest('hex')
        .slice(0, 16);
      url = `${pathToFileURL(file).href}?content=${hash}`;
      if (this.failed.has(url)) url += `&attempt=${this.attempt}`;
      mod = await withTimeout(import(url) as Promise<Record<string, unknown>>, this.opts.importTimeoutMs ?? 10_000);
      this.failed.delete(url);
    } catch (err) {
      if (url) this.failed.add(url.replace(/&attempt=\d+$/, ''));
      const reason = `import failed: ${describe(err)}`;
      log.error({ err: describe(err) }, 'tool module skipped');
      return { tools: [], skipped: [{ source: file, reason }] };
    }
    const { tools, skipped } = toolsFromModule(mod, file);
    for (const s of skipped) log.warn({ source: s.source, reason: s.reason }, 'tool export skipped');
    if (tools.length > 0) log.debug({ tools: tools.map((t) => t.def.name) }, 'tool module loaded');
    return { tools, skipped };
  }
}

async function listModules(dir: string, typescript: boolean): Promise<string[]> {
  const st = await stat(dir);
  if (!st.isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR' });
  const exts = typescript ? [...JS_EXTENSIONS, ...TS_EXTENSIONS] : JS_EXTENSIONS;
  const out: string[] = [];
  const walk = async (d: string) => {
    const entries = (await readdir(d, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      // Seed 000 §2.2: files starting with "_" are helpers, not tools; hidden files and dependencies are skipped too.
      if (e.name.startsWith('_') || e.name.startsWith('.') || e.name === 'node_modules') continue;
      const full = path.join(d, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile() && exts.some((x) => e.name.endsWith(x)) && !/\.(test|spec|d)\.[mc]?[jt]s$/.test(e.name)) out.push(full);
    }
  };
  await walk(dir);
  return out;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the module did not finish loading within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message.split('\n')[0] ?? ''}`;
  return String(err);
}

// ---------------------------------------------------------------------------
// Module forms

/** Seed 003's plain module: `export const SCHEMA = {name, description, parameters, display_name?}` + `export function execute(params)`. */
const PlainSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().min(1),
  parameters: z.record(z.string(), z.unknown()).optional(),
  display_name: z.string().min(1).optional(),
});

const MetadataInput = z.strictObject({
  category: z.string().min(1).optional(),
  tags: z.array(z.string().min(1)).optional(),
  idempotent: z.boolean().optional(),
  displayName: z.string().min(1).optional(),
  display_name: z.string().min(1).optional(),
  availableToSubagent: z.boolean().optional(),
  available_to_subagent: z.boolean().optional(),
  enabled: z.boolean().optional(),
});

const ToolObject = z.object({
  name: z.string().min(1),
  description: z.string().min(1),
  schema: z.custom<unknown>((v) => isZodSchema(v) || isPlainObject(v), { message: 'expected a zod schema or a JSON Schema object' }),
  execute: z.custom<(...a: unknown[]) => unknown>((v) => typeof v === 'function', { message: 'expected a function' }),
  metadata: MetadataInput.optional(),
});

/**
 * The tools a module exports:
 * - the plain form of seed 003 (SCHEMA + execute) — one tool;
 * - otherwise every export (and `default`, or an array in it) shaped like
 *   `{ name, description, schema, execute(args, ctx), metadata? }` — several per file.
 * An export that looks like a tool but is malformed is skipped with the reason;
 * a module with no tool at all is reported too.
 */
export function toolsFromModule(mod: Record<string, unknown>, file: string): { tools: ModuleTool[]; skipped: SkippedTool[] } {
  if ('SCHEMA' in mod || (typeof mod.execute === 'function' && !('default' in mod && isToolLike(mod.default)))) {
    return plainModuleTool(mod, file);
  }
  const tools: ModuleTool[] = [];
  const skipped: SkippedTool[] = [];
  const seen = new Set<unknown>();
  const candidates: [string, unknown][] = [];
  for (const [key, value] of Object.entries(mod)) {
    if (Array.isArray(value) && key === 'default') value.forEach((v, i) => candidates.push([`default[${i}]`, v]));
    else candidates.push([key, value]);
  }
  for (const [exportName, value] of candidates) {
    if (!isToolLike(value) || seen.has(value)) continue;
    seen.add(value);
    const source = `${file}#${exportName}`;
    const parsed = ToolObject.safeParse(value);
    if (!parsed.success) {
      skipped.push({ source, reason: `not a valid tool: ${issues(parsed.error)}` });
      continue;
    }
    const t = parsed.data;
    try {
      tools.push({ file, exportName, def: fromToolObject(t) });
    } catch (err) {
      skipped.push({ source, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  if (tools.length === 0 && skipped.length === 0) {
    skipped.push({ source: file, reason: 'exports no tool (expected SCHEMA and execute(), or objects { name, description, schema, execute })' });
  }
  return { tools, skipped };
}

function plainModuleTool(mod: Record<string, unknown>, file: string): { tools: ModuleTool[]; skipped: SkippedTool[] } {
  if (typeof mod.execute !== 'function') return { tools: [], skipped: [{ source: file, reason: 'exports SCHEMA but no execute function' }] };
  if (!('SCHEMA' in mod)) return { tools: [], skipped: [{ source: file, reason: 'exports execute but no SCHEMA' }] };
  const parsed = PlainSchema.safeParse(mod.SCHEMA);
  if (!parsed.success) return { tools: [], skipped: [{ source: `${file}#SCHEMA`, reason: `invalid SCHEMA: ${issues(parsed.error)}` }] };
  const s = parsed.data;
  const run = mod.execute as (params: Record<string, unknown>, ctx: ToolContext) => unknown;
  try {
    const parameters = normalizeJsonSchema(s.parameters ?? { type: 'object', properties: {} });
    const def: ToolDefinition = {
      name: s.name,
      description: s.description,
      schema: validatorFor(parameters),
      parametersJsonSchema: parameters,
      metadata: { category: 'custom', tags: [], idempotent: false, displayName: s.display_name ?? s.name, availableToSubagent: false },
      async execute(args, ctx) {
        // Seed 003: the engine injects `_workspace`, the absolute path of the thread's workspace.
        const params = { ...(args as Record<string, unknown>), _workspace: ctx.workspace.root };
        return asText(await run(params, ctx));
      },
    };
    return { tools: [{ file, exportName: 'SCHEMA', def }], skipped: [] };
  } catch (err) {
    return { tools: [], skipped: [{ source: `${file}#SCHEMA`, reason: err instanceof Error ? err.message : String(err) }] };
  }
}

function fromToolObject(t: z.infer<typeof ToolObject>): ToolDefinition {
  const m = t.metadata ?? {};
  const metadata: ToolMetadata = {
    category: m.category ?? 'custom',
    tags: m.tags ?? [],
    idempotent: m.idempotent ?? false,
    displayName: m.displayName ?? m.display_name ?? t.name,
    availableToSubagent: m.availableToSubagent ?? m.available_to_subagent ?? false,
    ...(m.enabled !== undefined ? { enabled: m.enabled } : {}),
  };
  const run = t.execute as (args: unknown, ctx: ToolContext) => unknown;
  const execute = async (args: unknown, ctx: ToolContext) => asText(await run(args, ctx));
  if (isZodSchema(t.schema)) {
    return { name: t.name, description: t.description, schema: t.schema, metadata, execute };
  }
  const parameters = normalizeJsonSchema(t.schema as Record<string, unknown>);
  return { name: t.name, description: t.description, schema: validatorFor(parameters), parametersJsonSchema: parameters, metadata, execute };
}

function isToolLike(v: unknown): boolean {
  return isPlainObject(v) && typeof (v as { execute?: unknown }).execute === 'function' && 'name' in v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A zod (v4) schema, possibly from another copy of zod than ours. */
function isZodSchema(v: unknown): v is z.ZodType {
  return isPlainObject(v) && '_zod' in v && typeof (v as { safeParse?: unknown }).safeParse === 'function';
}

/**
 * JSON Schema as a model API expects it: Google-style upper-case types
 * ("OBJECT", "STRING") lowered, `$schema` removed. Throws when the top level
 * is not an object schema.
 */
export function normalizeJsonSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const lower = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(lower);
    if (!isPlainObject(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) {
      if (k === '$schema') continue;
      if (k === 'type' && typeof val === 'string') out[k] = val.toLowerCase();
      else if (k === 'type' && Array.isArray(val)) out[k] = val.map((x) => (typeof x === 'string' ? x.toLowerCase() : x));
      // Under "properties" the keys are argument names: keep them, normalize their schemas.
      else if (k === 'properties' && isPlainObject(val)) out[k] = Object.fromEntries(Object.entries(val).map(([p, s]) => [p, lower(s)]));
      else out[k] = lower(val);
    }
    return out;
  };
  const out = lower(schema) as Record<string, unknown>;
  if (out.type === undefined && isPlainObject(out.properties)) out.type = 'object';
  if (out.type !== 'object') throw new Error(`the parameters schema must be of type object, got ${JSON.stringify(out.type ?? null)}`);
  return out;
}

/** A zod validator for a JSON Schema (zod's converter; an object check when it cannot convert). */
function validatorFor(schema: Record<string, unknown>): z.ZodType {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return z.record(z.string(), z.unknown());
  }
}

function asText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  try {
    return JSON.stringify(v, null, 2) ?? String(v);
  } catch {
    return String(v);
  }
}

function issues(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.map(String).join('.') || '(value)'}: ${i.message}`).join('; ');
}
