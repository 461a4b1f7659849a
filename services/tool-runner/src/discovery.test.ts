import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '@agentloop/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModuleLoader, normalizeJsonSchema, toolsFromModule, type DiscoveryResult } from './discovery.js';
import { createTempDir, createToolHarness, type TempDir, type ToolHarness } from './testing/index.js';

const REPO_NODE_MODULES = fileURLToPath(new URL('../../../node_modules', import.meta.url));

let tmp: TempDir;
let dir: string;
beforeEach(async () => {
  tmp = await createTempDir();
  dir = path.join(tmp.path, 'tools');
  await mkdir(dir);
  // Modules in the folder may import packages (zod) like any module of the deployment would.
  await symlink(REPO_NODE_MODULES, path.join(tmp.path, 'node_modules'), 'dir');
});
afterEach(async () => {
  await tmp[Symbol.asyncDispose]();
});

const put = (name: string, text: string) => writeFile(path.join(dir, name), text);
const discover = (opts: { importTimeoutMs?: number } = {}) => new ModuleLoader({ logger: silentLogger(), ...opts }).discover([dir]);
const names = (r: DiscoveryResult) => r.tools.map((t) => t.def.name);
const skippedReason = (r: DiscoveryResult, file: string) => r.skipped.find((s) => s.source.startsWith(path.join(dir, file)))?.reason;

const WEATHER = `
export const weather = {
  name: 'weather',
  description: 'Weather for a city',
  schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  metadata: { category: 'web', tags: ['weather'], idempotent: true, display_name: 'Weather' },
  async execute(args, ctx) { return 'Sunny in ' + args.city + ' for ' + ctx.tenantId; },
};
`;

describe('tool discovery', () => {
  it('loads a tool object exported by a module, with its metadata', async () => {
    await put('weather.mjs', WEATHER);
    const r = await discover();
    expect(names(r)).toEqual(['weather']);
    expect(r.skipped).toEqual([]);
    const t = r.tools[0]!;
    expect(t).toMatchObject({ file: path.join(dir, 'weather.mjs'), exportName: 'weather' });
    expect(t.def.metadata).toEqual({ category: 'web', tags: ['weather'], idempotent: true, displayName: 'Weather', availableToSubagent: false });
    expect(t.def.parametersJsonSchema).toEqual({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
  });

  it('loads several tools from one file, zod schemas included', async () => {
    await put(
      'text.mjs',
      `import { z } from 'zod';
export const upper = { name: 'upper', description: 'Upper-case text', schema: z.object({ text: z.string() }), execute: (a) => a.text.toUpperCase() };
export const lower = { name: 'lower', description: 'Lower-case text', schema: z.object({ text: z.string() }), execute: async (a) => a.text.toLowerCase() };
export const helper = (s) => s.trim();
export const LIMIT = 10;
`,
    );
    const r = await discover();
    expect(names(r)).toEqual(['upper', 'lower']);
    expect(r.skipped).toEqual([]);
  });

  it('loads the plain module form of seed 003 (SCHEMA + execute), Google-style types lowered', async () => {
    await put(
      'my_tool.mjs',
      `export const SCHEMA = {
  name: 'my_tool_name',
  display_name: 'Running my tool',
  description: 'Explains what the tool does to the LLM.',
  parameters: { type: 'OBJECT', properties: { param1: { type: 'STRING', description: 'Description of param1.' } }, required: ['param1'] },
};
export function execute(params) { return 'Result: ' + params.param1; }
`,
    );
    const r = await discover();
    expect(names(r)).toEqual(['my_tool_name']);
    const def = r.tools[0]!.def;
    expect(def.metadata.displayName).toBe('Running my tool');
    expect(def.parametersJsonSchema).toEqual({
      type: 'object',
      properties: { param1: { type: 'string', description: 'Description of param1.' } },
      required: ['param1'],
    });
  });

  it('skips a module that throws at import, with the reason, and loads the others', async () => {
    await put('a_broken.mjs', `throw new Error('missing API key');`);
    await put('weather.mjs', WEATHER);
    const r = await discover();
    expect(names(r)).toEqual(['weather']);
    expect(skippedReason(r, 'a_broken.mjs')).toBe('import failed: Error: missing API key');
  });

  it('skips a module with a syntax error', async () => {
    await put('syntax.mjs', 'export const = ;');
    const r = await discover();
    expect(r.tools).toEqual([]);
    expect(skippedReason(r, 'syntax.mjs')).toMatch(/^import failed: /);
  });

  it('skips a module that exports no tool', async () => {
    await put('garbage.mjs', 'export const answer = 42; export default "hello";');
    const r = await discover();
    expect(skippedReason(r, 'garbage.mjs')).toBe('exports no tool (expected SCHEMA and execute(), or objects { name, description, schema, execute })');
  });

  it('skips a malformed tool export and keeps the valid one in the same file', async () => {
    await put(
      'half.mjs',
      `export const good = { name: 'good', description: 'ok', schema: { type: 'object', properties: {} }, execute: () => 'ok' };
export const bad = { name: 'bad', schema: 'nope', execute: () => 'x' };`,
    );
    const r = await discover();
    expect(names(r)).toEqual(['good']);
    expect(r.skipped).toEqual([
      {
        source: `${path.join(dir, 'half.mjs')}#bad`,
        reason: 'not a valid tool: description: Invalid input: expected string, received undefined; schema: expected a zod schema or a JSON Schema object',
      },
    ]);
  });

  it('skips a SCHEMA without execute and a SCHEMA whose parameters are not an object', async () => {
    await put('noexec.mjs', `export const SCHEMA = { name: 'x', description: 'y' };`);
    await put('notobject.mjs', `export const SCHEMA = { name: 'z', description: 'y', parameters: { type: 'STRING' } }; export const execute = () => '';`);
    const r = await discover();
    expect(r.tools).toEqual([]);
    expect(skippedReason(r, 'noexec.mjs')).toBe('exports SCHEMA but no execute function');
    expect(skippedReason(r, 'notobject.mjs')).toBe('the parameters schema must be of type object, got "string"');
  });

  it('skips a module whose import never settles', async () => {
    await put('hang.mjs', 'await new Promise(() => {}); export const x = 1;');
    const r = await discover({ importTimeoutMs: 200 });
    expect(skippedReason(r, 'hang.mjs')).toBe('import failed: Error: the module did not finish loading within 200 ms');
  });

  it('ignores helper files starting with "_", hidden files, tests and other extensions; walks sub-folders', async () => {
    await put('_helper.mjs', 'throw new Error("not a tool module")');
    await put('.hidden.mjs', 'throw new Error("hidden")');
    await put('weather.test.mjs', 'throw new Error("test")');
    await put('README.md', '# tools');
    await mkdir(path.join(dir, 'nested'));
    await writeFile(path.join(dir, 'nested', 'weather.js'), WEATHER);
    const r = await discover();
    expect(r.files).toBe(1);
    expect(names(r)).toEqual(['weather']);
    expect(r.skipped).toEqual([]);
  });

  it('reports a tool directory that does not exist', async () => {
    const missing = path.join(tmp.path, 'missing');
    const r = await new ModuleLoader({ logger: silentLogger() }).discover([missing]);
    expect(r.skipped).toEqual([{ source: missing, reason: 'tool directory not found' }]);
  });

  it('loads .ts modules when the process runs TypeScript', async () => {
    await put('typed.ts', `export const typed = { name: 'typed', description: 'd', schema: { type: 'object' }, execute: (a: unknown): string => 'ok' };`);
    expect(names(await new ModuleLoader({ logger: silentLogger(), typescript: true }).discover([dir]))).toEqual(['typed']);
    expect(names(await new ModuleLoader({ logger: silentLogger(), typescript: false }).discover([dir]))).toEqual([]);
  });
});

describe('discovered tools at execution', () => {
  let h: ToolHarness;
  beforeEach(async () => {
    h = await createToolHarness();
  });
  afterEach(async () => {
    await h[Symbol.asyncDispose]();
  });

  it('runs a discovered tool with validated arguments and the call context', async () => {
    await put('weather.mjs', WEATHER);
    h.registry.replaceModules((await discover()).tools);
    expect((await h.call('weather', { city: 'Oslo' })).content).toBe('Sunny in Oslo for tenant-a');
    expect((await h.call('weather', {})).content).toBe('Error: Invalid arguments for weather: city: required (expected string)');
  });

  it('injects _workspace into a seed-003 module and turns a non-string result into JSON', async () => {
    await put(
      'ws.mjs',
      `export const SCHEMA = { name: 'where', description: 'd', parameters: { type: 'OBJECT', properties: {} } };
export async function execute(params) { return { workspace: params._workspace }; }`,
    );
    h.registry.replaceModules((await discover()).tools);
    const res = await h.call('where');
    expect(JSON.parse(res.content)).toEqual({ workspace: h.workspace.root });
  });

  it('reports an error thrown by a discovered tool through the error boundary', async () => {
    await put(
      'boom.mjs',
      `export const boom = { name: 'boom', description: 'd', schema: { type: 'object' }, execute() { throw new TypeError('bad input'); } };`,
    );
    h.registry.replaceModules((await discover()).tools);
    expect((await h.call('boom')).content).toBe('Error: Unexpected error: TypeError: bad input');
  });
});

describe('toolsFromModule', () => {
  it('accepts a default export holding an array of tools', () => {
    const t = (name: string) => ({ name, description: 'd', schema: { type: 'object' }, execute: () => '' });
    const { tools } = toolsFromModule({ default: [t('a'), t('b')] }, '/x.mjs');
    expect(tools.map((x) => [x.def.name, x.exportName])).toEqual([
      ['a', 'default[0]'],
      ['b', 'default[1]'],
    ]);
  });

  it('counts a tool exported under two names once', () => {
    const tool = { name: 'a', description: 'd', schema: { type: 'object' }, execute: () => '' };
    expect(toolsFromModule({ a: tool, default: tool }, '/x.mjs').tools).toHaveLength(1);
  });
});

describe('normalizeJsonSchema', () => {
  it('lowers types but keeps property names as written', () => {
    expect(normalizeJsonSchema({ type: 'OBJECT', properties: { TYPE: { type: 'ARRAY', items: { type: 'NUMBER' } } }, $schema: 'x' })).toEqual({
      type: 'object',
      properties: { TYPE: { type: 'array', items: { type: 'number' } } },
    });
  });

  it('infers type object from properties', () => {
    expect(normalizeJsonSchema({ properties: {} })).toEqual({ type: 'object', properties: {} });
  });
});
