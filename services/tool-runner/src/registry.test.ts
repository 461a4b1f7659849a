import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolRegistry, defineTool } from './registry.js';
import { builtinTools } from './tools/index.js';
import { parseToolsConfig } from './tools-config.js';

const opts = { textFileMaxBytes: 102_400, textPreviewBytes: 51_200, writeMaxBytes: 10, findMaxResults: 200 };
const meta = { category: 'test', tags: [], idempotent: true, displayName: 'T', availableToSubagent: false };

function registryWith(enableDebug: boolean): ToolRegistry {
  const r = new ToolRegistry();
  for (const t of builtinTools({ ...opts, enableDebug })) r.register(t);
  return r;
}

describe('ToolRegistry', () => {
  it('registers the built-in tools by their exact names', () => {
    expect(registryWith(false).names()).toEqual(['now', 'list_workspace_files', 'read_file', 'write_file', 'find_files']);
    expect(registryWith(true).names()).toEqual(['now', 'list_workspace_files', 'read_file', 'write_file', 'find_files', 'debug_sleep', 'debug_fail']);
  });

  it('derives the JSON Schema of the arguments from the zod schema', () => {
    const spec = registryWith(false)
      .specs()
      .find((s) => s.name === 'write_file');
    const schema = JSON.parse(spec?.parametersJsonSchema ?? '{}') as {
      type: string;
      properties: Record<string, unknown>;
      required: string[];
      $schema?: string;
    };
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties)).toEqual(['file_path', 'content', 'append']);
    expect(schema.required).toEqual(['file_path', 'content']);
    expect(schema.$schema).toBeUndefined();
  });

  it('carries the metadata: read-only tools and now idempotent, write_file not', () => {
    const byName = new Map(
      registryWith(false)
        .specs()
        .map((s) => [s.name, s.metadata]),
    );
    for (const n of ['now', 'list_workspace_files', 'read_file', 'find_files']) expect(byName.get(n)?.idempotent).toBe(true);
    expect(byName.get('write_file')).toMatchObject({ idempotent: false, category: 'file', displayName: 'Write File', availableToSubagent: true });
    expect(byName.get('read_file')?.tags).toContain('read');
  });

  it('refuses a duplicate name', () => {
    const r = registryWith(false);
    expect(() => r.register(defineTool({ name: 'now', description: 'x', schema: z.object({}), metadata: meta, execute: () => Promise.resolve('') }))).toThrow(
      'Tool "now" is already registered',
    );
  });

  it('refuses a name a model API would reject', () => {
    const r = new ToolRegistry();
    expect(() =>
      r.register(defineTool({ name: 'read file', description: 'x', schema: z.object({}), metadata: meta, execute: () => Promise.resolve('') })),
    ).toThrow('Invalid tool name');
  });

  it('refuses an arguments schema that is not an object', () => {
    const r = new ToolRegistry();
    expect(() => r.register(defineTool({ name: 'bad', description: 'x', schema: z.string(), metadata: meta, execute: () => Promise.resolve('') }))).toThrow(
      'must be an object',
    );
  });

  it('applies schema defaults when parsing arguments', () => {
    const r = registryWith(false);
    const def = r.get('find_files');
    expect(def && r.parseArgs(def, '{"pattern":"*.md"}')).toEqual({ pattern: '*.md', path: '.' });
  });
});

describe('ToolRegistry tiers (seed 000 §2.1, §2.5, §2.6)', () => {
  const tool = (name: string, m: Partial<typeof meta> & { enabled?: boolean } = {}) =>
    defineTool({ name, description: `${name} tool`, schema: z.object({}), metadata: { ...meta, ...m }, execute: () => Promise.resolve(name) });

  /** now + read_file persistent, http_fetch registered, extract_links disabled, todo persistent by config. */
  function tiered(): ToolRegistry {
    const r = new ToolRegistry();
    r.register(tool('now', { availableToSubagent: true }));
    r.register(tool('read_file', { availableToSubagent: true }));
    r.register(tool('http_fetch'));
    r.register(tool('extract_links'));
    r.register(tool('todo_write'));
    r.applyConfig(
      parseToolsConfig(
        `
core:
  now: {}
  read_file: {}
optional:
  http_fetch: { enabled: true, available_to_subagent: false, category: network }
  extract_links: { enabled: false }
  todo_write: { enabled: true, available_to_subagent: true }
`,
        'test',
      ),
    );
    return r;
  }

  it('keeps disabled tools discovered but not registered', () => {
    const r = tiered();
    expect(r.discovered().map((t) => t.def.name)).toEqual(['now', 'read_file', 'http_fetch', 'extract_links', 'todo_write']);
    expect(r.names()).toEqual(['now', 'read_file', 'http_fetch', 'todo_write']);
    expect(r.get('extract_links')).toBeUndefined();
    expect(r.lookup('extract_links')?.enabled).toBe(false);
  });

  it('makes enabled available_to_subagent tools persistent, config overriding the tool', () => {
    expect(
      tiered()
        .persistent()
        .map((t) => t.def.name),
    ).toEqual(['now', 'read_file', 'todo_write']);
  });

  it('lists only the persistent tools when nothing is allowed or mentioned', () => {
    expect(
      tiered()
        .visible()
        .records.map((t) => t.def.name),
    ).toEqual(['now', 'read_file', 'todo_write']);
  });

  it('orders the visible set persistent, then allowed, then mentioned, each name once', () => {
    const v = tiered().visible({ allowed: ['http_fetch', 'now', 'http_fetch'], mentioned: ['extract_links', 'read_file', 'http_fetch'] });
    expect(v.records.map((t) => t.def.name)).toEqual(['now', 'read_file', 'todo_write', 'http_fetch', 'extract_links']);
    expect(v.notFound).toEqual([]);
  });

  it('looks allowed names up among enabled tools only, mentioned names among all discovered ones', () => {
    const v = tiered().visible({ allowed: ['extract_links', 'ghost'], mentioned: ['ghost', 'pdf'] });
    expect(v.records.map((t) => t.def.name)).toEqual(['now', 'read_file', 'todo_write']);
    expect(v.notFound).toEqual(['extract_links', 'ghost', 'pdf']);
    expect(
      tiered()
        .visible({ mentioned: ['extract_links'] })
        .records.map((t) => t.def.name),
    ).toContain('extract_links');
  });

  it('shows a sub-agent only tools available to sub-agents', () => {
    const v = tiered().visible({ subagent: true, allowed: ['http_fetch'], mentioned: ['extract_links'] });
    expect(v.records.map((t) => t.def.name)).toEqual(['now', 'read_file', 'todo_write']);
    expect(v.notFound).toEqual(['http_fetch', 'extract_links']);
  });

  it('applies category, tags and description overrides to the wire spec', () => {
    const r = tiered();
    r.applyConfig(parseToolsConfig('core:\n  now: { category: meta, tags: [meta, time], description: Get current UTC time }\n', 'test'));
    const spec = r.specs().find((s) => s.name === 'now');
    expect(spec?.description).toBe('Get current UTC time');
    expect(spec?.metadata).toMatchObject({ category: 'meta', tags: ['meta', 'time'], enabled: true });
  });

  it('marks a disabled tool in its spec so the caller can execute it on demand', () => {
    expect(tiered().lookup('extract_links')?.spec.metadata?.enabled).toBe(false);
  });

  it('enables an unlisted tool unless its metadata says otherwise', () => {
    const r = new ToolRegistry();
    r.register(tool('a'));
    r.register(tool('b', { enabled: false }));
    expect(r.names()).toEqual(['a']);
    expect(r.applyConfig(parseToolsConfig('optional:\n  b: { enabled: true }\n  ghost: {}\n', 'test'))).toEqual(['ghost']);
    expect(r.names()).toEqual(['a', 'b']);
  });

  it('replaces module tools at once and skips names already taken, with the reason', () => {
    const r = new ToolRegistry();
    r.register(tool('now'));
    const first = r.replaceModules([
      { def: tool('weather'), file: '/tools/weather.mjs' },
      { def: tool('now'), file: '/tools/clock.mjs' },
      { def: tool('weather'), file: '/tools/weather2.mjs' },
      { def: tool('bad name'), file: '/tools/bad.mjs', exportName: 'bad' },
    ]);
    expect(first.loaded).toEqual(['weather']);
    expect(first.skipped).toEqual([
      { source: '/tools/clock.mjs', reason: 'tool name "now" is already taken by a built-in tool' },
      { source: '/tools/weather2.mjs', reason: 'tool name "weather" is already taken by /tools/weather.mjs' },
      { source: '/tools/bad.mjs#bad', reason: 'invalid tool name "bad name" (expected ^[a-zA-Z0-9_-]{1,64}$)' },
    ]);
    r.replaceModules([{ def: tool('stocks'), file: '/tools/stocks.mjs' }]);
    expect(r.names()).toEqual(['now', 'stocks']);
  });

  it('takes per-call idempotency from the tool when it depends on the arguments', () => {
    const r = new ToolRegistry();
    const def = defineTool({
      name: 'fetchish',
      description: 'x',
      schema: z.object({ method: z.string() }),
      metadata: { ...meta, idempotent: false },
      isIdempotent: (a) => a.method === 'GET',
      execute: () => Promise.resolve(''),
    });
    r.register(def);
    expect(r.isIdempotent(r.get('fetchish')!, { method: 'GET' })).toBe(true);
    expect(r.isIdempotent(r.get('fetchish')!, { method: 'POST' })).toBe(false);
  });
});
