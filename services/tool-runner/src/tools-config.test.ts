import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '@agentloop/core';
import { describe, expect, it } from 'vitest';
import { createTempDir } from './testing/index.js';
import { DEFAULT_TOOLS_CONFIG_PATH, ToolsConfigError, loadToolsConfig, parseToolsConfig } from './tools-config.js';

const parse = (text: string) => parseToolsConfig(text, 'tools.yaml');
/** The message of the ToolsConfigError `text` produces. */
const failure = (text: string): string => {
  try {
    parse(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ToolsConfigError);
    return (err as Error).message;
  }
  throw new Error('expected the config to be refused');
};

describe('tools.yaml validation', () => {
  it('enables core tools and optional tools only with enabled: true', () => {
    const cfg = parse(`
core:
  now:
    category: meta
optional:
  http_fetch:
    enabled: true
  extract_links:
    enabled: false
  unset_tool:
    category: read
`);
    expect(cfg.tools.get('now')).toMatchObject({ section: 'core', enabled: true, category: 'meta' });
    expect(cfg.tools.get('http_fetch')?.enabled).toBe(true);
    expect(cfg.tools.get('extract_links')?.enabled).toBe(false);
    expect(cfg.tools.get('unset_tool')?.enabled).toBe(false);
  });

  it('accepts a tool listed with no settings', () => {
    expect(parse('core:\n  now:\n').tools.get('now')).toEqual({ section: 'core', enabled: true });
  });

  it('reads available_to_subagent, tags and the description override', () => {
    const cfg = parse(`
optional:
  todo_write:
    enabled: true
    available_to_subagent: true
    tags: [task, meta]
    description: Track the task list
`);
    expect(cfg.tools.get('todo_write')).toEqual({
      section: 'optional',
      enabled: true,
      availableToSubagent: true,
      tags: ['task', 'meta'],
      description: 'Track the task list',
    });
  });

  it('treats an empty file as no configuration', () => {
    expect(parse('').tools.size).toBe(0);
  });

  it('names a field of the wrong type', () => {
    expect(failure('optional:\n  http_fetch:\n    enabled: "yes"\n')).toContain('optional.http_fetch.enabled: Invalid input: expected boolean');
  });

  it('names an unknown field with the ones it expected', () => {
    expect(failure('optional:\n  http_fetch:\n    enabeld: true\n')).toContain(
      'optional.http_fetch.enabeld: unknown field (expected one of enabled, available_to_subagent, category, tags, description)',
    );
  });

  it('refuses an unknown top-level section', () => {
    expect(failure('core: {}\nplugins: {}\n')).toContain('plugins: unknown field (expected one of core, optional)');
  });

  it('refuses disabling a core tool', () => {
    expect(failure('core:\n  now:\n    enabled: false\n')).toContain('core.now.enabled: core tools are always enabled; move now to optional to disable it');
  });

  it('refuses a tool listed under both sections', () => {
    expect(failure('core:\n  now: {}\noptional:\n  now: {}\n')).toContain('optional.now: now is listed under both core and optional');
  });

  it('refuses a tool name a model API would reject', () => {
    expect(failure('optional:\n  "web search": {}\n')).toContain('optional.web search: invalid tool name');
  });

  it('refuses tags that are not a list of strings', () => {
    expect(failure('core:\n  now:\n    tags: time\n')).toContain('core.now.tags:');
  });

  it('reports YAML syntax errors with the line', () => {
    expect(failure('core:\n  now: [\n')).toMatch(/Invalid tools config tools\.yaml:\n {2}line \d+: /);
  });

  it('refuses a key given twice', () => {
    expect(failure('core:\n  now: {}\n  now: {}\n')).toContain('Invalid tools config');
  });

  it('is a ConfigError naming the file when the file is missing', async () => {
    await using tmp = await createTempDir();
    const file = path.join(tmp.path, 'nope.yaml');
    await expect(loadToolsConfig(file)).rejects.toBeInstanceOf(ConfigError);
    await expect(loadToolsConfig(file)).rejects.toThrow(`Cannot read tools config ${file}: file not found`);
  });

  it('loads a file from disk', async () => {
    await using tmp = await createTempDir();
    const file = path.join(tmp.path, 'tools.yaml');
    await writeFile(file, 'core:\n  now: {}\n');
    expect((await loadToolsConfig(file)).source).toBe(file);
  });

  it('ships a valid default that keeps http_fetch disabled', async () => {
    const cfg = await loadToolsConfig(DEFAULT_TOOLS_CONFIG_PATH);
    expect([...cfg.tools.keys()]).toEqual([
      'now',
      'list_workspace_files',
      'read_file',
      'write_file',
      'find_files',
      'search_file',
      'python_analyser',
      'run_bash_command',
      'http_fetch',
    ]);
    expect(cfg.tools.get('http_fetch')).toMatchObject({ section: 'optional', enabled: false, availableToSubagent: false });
  });
});
