import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '@agentloop/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTempDir, createToolHarness, type TempDir, type ToolHarness } from './testing/index.js';
import { ToolLoader } from './tool-loader.js';
import { ToolsConfigError } from './tools-config.js';

let tmp: TempDir;
let h: ToolHarness;
let dir: string;
let configPath: string;
let loader: ToolLoader;

const tool = (name: string, answer: string) =>
  `export const t = { name: '${name}', description: '${name}', schema: { type: 'object', properties: {} }, execute: () => '${answer}' };\n`;

beforeEach(async () => {
  tmp = await createTempDir();
  h = await createToolHarness();
  dir = path.join(tmp.path, 'tools');
  await mkdir(dir);
  configPath = path.join(tmp.path, 'tools.yaml');
  await writeFile(configPath, 'core:\n  now: {}\n');
  loader = new ToolLoader({ registry: h.registry, logger: silentLogger(), configPath, dirs: [dir] });
});
afterEach(async () => {
  await h[Symbol.asyncDispose]();
  await tmp[Symbol.asyncDispose]();
});

describe('ToolLoader', () => {
  it('boots with the tool modules of the configured folders after the built-in tools', async () => {
    await writeFile(path.join(dir, 'alpha.mjs'), tool('alpha', 'a1'));
    const res = await loader.boot();
    expect(res.loaded).toEqual(['alpha']);
    expect(h.registry.names()).toEqual([
      'now',
      'list_workspace_files',
      'read_file',
      'write_file',
      'find_files',
      'python_analyser',
      'run_bash_command',
      'alpha',
    ]);
  });

  it('picks up a new file on reload', async () => {
    await loader.boot();
    expect(h.registry.has('beta')).toBe(false);
    await writeFile(path.join(dir, 'beta.mjs'), tool('beta', 'b1'));
    const res = await loader.reload('test');
    expect(res.loaded).toEqual(['beta']);
    expect((await h.call('beta')).content).toBe('b1');
  });

  it('picks up a changed file on reload', async () => {
    await writeFile(path.join(dir, 'alpha.mjs'), tool('alpha', 'version 1'));
    await loader.boot();
    expect((await h.call('alpha')).content).toBe('version 1');
    await writeFile(path.join(dir, 'alpha.mjs'), tool('alpha', 'version 2'));
    await loader.reload('test');
    expect((await h.call('alpha')).content).toBe('version 2');
  });

  it('drops the tools of a removed file on reload', async () => {
    await writeFile(path.join(dir, 'alpha.mjs'), tool('alpha', 'a'));
    await loader.boot();
    await rm(path.join(dir, 'alpha.mjs'));
    await loader.reload('test');
    expect(h.registry.lookup('alpha')).toBeUndefined();
  });

  it('loads a module again once its import error is fixed', async () => {
    await writeFile(path.join(dir, 'alpha.mjs'), 'throw new Error("not yet");');
    const first = await loader.boot();
    expect(first.skipped.map((s) => s.reason)).toEqual(['import failed: Error: not yet']);
    await writeFile(path.join(dir, 'alpha.mjs'), tool('alpha', 'fixed'));
    expect((await loader.reload('test')).loaded).toEqual(['alpha']);
  });

  it('applies tools.yaml on reload: a tool disabled in optional stays discovered only', async () => {
    await writeFile(path.join(dir, 'alpha.mjs'), tool('alpha', 'a'));
    await loader.boot();
    expect(h.registry.has('alpha')).toBe(true);
    await writeFile(configPath, 'optional:\n  alpha:\n    enabled: false\n');
    const res = await loader.reload('test');
    expect(res.registered).not.toContain('alpha');
    expect(h.registry.lookup('alpha')?.enabled).toBe(false);
  });

  it('refuses to boot with an invalid tools.yaml, naming the field', async () => {
    await writeFile(configPath, 'optional:\n  alpha:\n    enabled: maybe\n');
    await expect(loader.boot()).rejects.toBeInstanceOf(ToolsConfigError);
    await expect(loader.boot()).rejects.toThrow('optional.alpha.enabled');
  });

  it('refuses to boot when TOOLS_CONFIG names a missing file', async () => {
    const l = new ToolLoader({ registry: h.registry, logger: silentLogger(), configPath: path.join(tmp.path, 'nope.yaml'), dirs: [] });
    await expect(l.boot()).rejects.toThrow('file not found');
  });

  it('keeps the previous tools.yaml when the new one is invalid, and still reloads modules', async () => {
    await writeFile(configPath, 'optional:\n  alpha:\n    enabled: false\n');
    await writeFile(path.join(dir, 'alpha.mjs'), tool('alpha', 'a'));
    await loader.boot();
    await writeFile(configPath, 'optional:\n  alpha:\n    enabled: true\n    colour: red\n');
    await writeFile(path.join(dir, 'beta.mjs'), tool('beta', 'b'));
    const res = await loader.reload('test');
    expect(res.configError).toContain('optional.alpha.colour: unknown field');
    expect(h.registry.lookup('alpha')?.enabled).toBe(false);
    expect(h.registry.has('beta')).toBe(true);
  });

  it('reports tools.yaml entries that match no tool', async () => {
    await writeFile(configPath, 'optional:\n  ghost: { enabled: true }\n');
    expect((await loader.boot()).unknownConfigured).toEqual(['ghost']);
  });

  it('folds reloads requested during a reload into one follow-up', async () => {
    await loader.boot();
    const a = loader.reload('1');
    const b = loader.reload('2');
    const c = loader.reload('3');
    expect(b).toBe(c);
    expect(a).not.toBe(b);
    await Promise.all([a, b, c]);
  });

  it('reloads by itself when watching and a module is added', async () => {
    await loader.boot();
    const stop = loader.watch(50);
    try {
      await writeFile(path.join(dir, 'gamma.mjs'), tool('gamma', 'g'));
      await vi.waitFor(() => expect(h.registry.has('gamma')).toBe(true), { timeout: 10_000, interval: 50 });
    } finally {
      stop();
    }
  });

  it('reloads by itself when watching and tools.yaml changes', async () => {
    await writeFile(path.join(dir, 'alpha.mjs'), tool('alpha', 'a'));
    await loader.boot();
    const stop = loader.watch(50);
    try {
      await writeFile(configPath, 'optional:\n  alpha:\n    enabled: false\n');
      await vi.waitFor(() => expect(h.registry.lookup('alpha')?.enabled).toBe(false), { timeout: 10_000, interval: 50 });
    } finally {
      stop();
    }
  });
});
