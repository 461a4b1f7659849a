import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolRegistry, defineTool } from './registry.js';
import { builtinTools } from './tools/index.js';

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
    const spec = registryWith(false).specs().find((s) => s.name === 'write_file');
    const schema = JSON.parse(spec?.parametersJsonSchema ?? '{}') as { type: string; properties: Record<string, unknown>; required: string[]; $schema?: string };
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties)).toEqual(['file_path', 'content', 'append']);
    expect(schema.required).toEqual(['file_path', 'content']);
    expect(schema.$schema).toBeUndefined();
  });

  it('carries the metadata: read-only tools and now idempotent, write_file not', () => {
    const byName = new Map(registryWith(false).specs().map((s) => [s.name, s.metadata]));
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
    expect(() => r.register(defineTool({ name: 'read file', description: 'x', schema: z.object({}), metadata: meta, execute: () => Promise.resolve('') }))).toThrow(
      'Invalid tool name',
    );
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
