import { describe, expect, it } from 'vitest';
import { TOOL_NAME_PATTERN, parseMcpFile } from './config.js';
import { baseName, buildCatalog, candidateServers, type McpTool } from './naming.js';

const tool = (name: string, annotations?: McpTool['annotations']): McpTool => ({
  name,
  inputSchema: { type: 'object' },
  ...(annotations ? { annotations } : {}),
});
const servers = (yaml: string) => parseMcpFile(yaml).servers;

describe('exposed tool names', () => {
  it('are the alias, else <server>_<tool> with invalid characters replaced', () => {
    const s = servers('servers:\n  fs: { command: x, tools: { read_file: { alias: fs_read } } }\n');
    expect(baseName('fs', 'read_file', s.fs!)).toBe('fs_read');
    expect(baseName('fs', 'list.dir/all', s.fs!)).toBe('fs_list_dir_all');
  });

  it('longer than 64 characters are cut and made unique with a hash, staying valid', () => {
    const s = servers('servers:\n  srv: { command: x }\n');
    const a = baseName('srv', `${'a'.repeat(70)}_one`, s.srv!);
    const b = baseName('srv', `${'a'.repeat(70)}_two`, s.srv!);
    expect(a).toMatch(TOOL_NAME_PATTERN);
    expect(b).toMatch(TOOL_NAME_PATTERN);
    expect(a).not.toBe(b);
    expect(a.startsWith('srv_')).toBe(true);
  });
});

describe('catalog', () => {
  it('leaves out disabled tools and marks always-available and idempotent ones', () => {
    const s = servers(`
servers:
  fs:
    command: x
    tools:
      read: { always_available: true, alias: fs_read }
      write: { enabled: false }
`);
    const c = buildCatalog(s, new Map([['fs', [tool('read', { readOnlyHint: true }), tool('write'), tool('stat', { idempotentHint: true }), tool('touch')]]]));
    expect(c.tools.map((t) => [t.name, t.alwaysAvailable, t.idempotent])).toEqual([
      ['fs_read', true, true],
      ['fs_stat', false, true],
      ['fs_touch', false, false],
    ]);
    expect(c.byName.get('fs_write')).toBeUndefined();
  });

  it('a server-wide always_available offers every tool of the server', () => {
    const s = servers('servers:\n  gh: { command: x, always_available: true }\n');
    const c = buildCatalog(s, new Map([['gh', [tool('issues'), tool('prs')]]]));
    expect(c.tools.every((t) => t.alwaysAvailable)).toBe(true);
  });

  it('colliding generated names both get a hash suffix, the same whichever server listed first', () => {
    const s = servers('servers:\n  a: { command: x }\n  a_b: { command: y }\n');
    const one = buildCatalog(
      s,
      new Map([
        ['a', [tool('b_c')]],
        ['a_b', [tool('c')]],
      ]),
    );
    const two = buildCatalog(
      s,
      new Map([
        ['a_b', [tool('c')]],
        ['a', [tool('b_c')]],
      ]),
    );
    expect(one.collisions).toEqual([{ name: 'a_b_c', claimants: ['a/b_c', 'a_b/c'], resolved: one.collisions[0]!.resolved }]);
    const names = one.tools.map((t) => t.name).sort();
    expect(names).toEqual(two.tools.map((t) => t.name).sort());
    expect(names).not.toContain('a_b_c');
    for (const n of names) expect(n).toMatch(/^a_b_c_[0-9a-f]{8}$/);
    expect(one.byName.get(names[0]!)!.server).not.toBe(one.byName.get(names[1]!)!.server);
  });

  it('an alias keeps its name against a generated one, which gets a hash suffix', () => {
    const s = servers('servers:\n  x: { command: x, tools: { t: { alias: y_z } } }\n  y: { command: y }\n');
    const c = buildCatalog(
      s,
      new Map([
        ['x', [tool('t')]],
        ['y', [tool('z')]],
      ]),
    );
    expect(c.byName.get('y_z')!.server).toBe('x');
    const other = c.tools.find((t) => t.server === 'y')!;
    expect(other.name).toMatch(/^y_z_[0-9a-f]{8}$/);
    expect(c.collisions).toHaveLength(1);
  });

  it('tools that merge when sanitized are told apart', () => {
    const s = servers('servers:\n  fs: { command: x }\n');
    const c = buildCatalog(s, new Map([['fs', [tool('read.file'), tool('read_file')]]]));
    expect(new Set(c.tools.map((t) => t.name)).size).toBe(2);
  });

  it('names the servers that may own a name, by alias or prefix', () => {
    const s = servers('servers:\n  fs: { command: x, tools: { read: { alias: reader } } }\n  fs_extra: { command: y }\n  web: { command: z }\n');
    expect(candidateServers(s, 'reader')).toEqual(['fs']);
    expect(candidateServers(s, 'fs_extra_get')).toEqual(['fs', 'fs_extra']);
    expect(candidateServers(s, 'nothing')).toEqual([]);
  });
});
