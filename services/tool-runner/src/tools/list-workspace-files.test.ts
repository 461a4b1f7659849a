import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTempDir, createToolHarness, type TempDir, type ToolHarness } from '../testing/index.js';
import { createListWorkspaceFilesTool } from './list-workspace-files.js';

let h: ToolHarness;
let skills: TempDir;
const at = (rel: string) => path.join(h.workspace.root, rel);

beforeEach(async () => {
  skills = await createTempDir('agentloop-skills-');
  await mkdir(path.join(skills.path, 'pdf'));
  await writeFile(path.join(skills.path, 'pdf', 'SKILL.md'), '# PDF');
  h = await createToolHarness({ env: { SKILLS_ROOT: skills.path } });
});
afterEach(async () => {
  await h[Symbol.asyncDispose]();
  await skills[Symbol.asyncDispose]();
});

describe('list_workspace_files', () => {
  it('lists the root in the seed format, hiding .metadata.json', async () => {
    const res = await h.call('list_workspace_files');
    expect(res.content).toBe(['[DIR]  outputs/', '[DIR]  skills/', '[DIR]  temp/', '[DIR]  uploads/'].join('\n'));
  });

  it('lists files with sizes, folders and skill symlinks by logical path', async () => {
    await writeFile(at('outputs/a.txt'), 'hello world!');
    await mkdir(at('outputs/charts'));
    await writeFile(at('outputs/.hidden'), 'x');
    await symlink(path.join(skills.path, 'pdf'), at('skills/pdf'));
    expect((await h.call('list_workspace_files', { directory: 'outputs' })).content).toBe('[FILE] outputs/a.txt (12 bytes)\n[DIR]  outputs/charts/');
    expect((await h.call('list_workspace_files', { directory: 'skills' })).content).toBe('[SKILL] skills/pdf/');
  });

  it('lists inside a skill through its symlink with logical paths', async () => {
    await symlink(path.join(skills.path, 'pdf'), at('skills/pdf'));
    const res = await h.call('list_workspace_files', { directory: 'skills/pdf' });
    expect(res.content).toBe('[FILE] skills/pdf/SKILL.md (5 bytes)');
    expect(res.content).not.toContain(skills.path);
  });

  it('refuses to list a folder a symlink takes outside the workspace', async () => {
    await symlink('/etc', at('uploads/etc'));
    expect((await h.call('list_workspace_files', { directory: 'uploads' })).content).toBe('[SKILL] uploads/etc/');
    expect((await h.call('list_workspace_files', { directory: 'uploads/etc' })).content).toBe('Error: Path outside workspace: uploads/etc');
  });

  it('refuses ../ and absolute paths outside', async () => {
    expect((await h.call('list_workspace_files', { directory: '../' })).content).toBe('Error: Path outside workspace: ../');
    expect((await h.call('list_workspace_files', { directory: '/etc' })).content).toBe('Error: Path outside workspace: /etc');
  });

  it('says when a folder is empty', async () => {
    expect((await h.call('list_workspace_files', { directory: 'temp' })).content).toBe('(empty directory: temp/)');
  });

  it('reports a missing folder and a file given as folder', async () => {
    expect((await h.call('list_workspace_files', { directory: 'nope' })).content).toBe('Error: Directory not found: nope');
    await writeFile(at('uploads/f.txt'), 'x');
    expect((await h.call('list_workspace_files', { directory: 'uploads/f.txt' })).content).toBe(
      'Error: Not a directory: uploads/f.txt; use read_file to read a file',
    );
  });
});

describe('list_workspace_files: bounded reading (issue 18)', () => {
  it('reads at most its maximum of entries of a huge folder and says the listing is partial', async () => {
    h.registry.register({ ...createListWorkspaceFilesTool({ maxScanned: 4 }), name: 'list_small' });
    for (let i = 0; i < 10; i++) await writeFile(at(`temp/f${i}.txt`), 'x');
    const res = await h.call('list_small', { directory: 'temp' });
    const lines = res.content.split('\n');
    expect(lines.filter((l) => l.startsWith('[FILE] temp/f'))).toHaveLength(4);
    expect(lines.at(-1)).toBe('(the folder has more than 4 entries; only part of it is listed: use find_files with a pattern to narrow down)');
  });

  it('refuses a 200 KB directory path with the limit', async () => {
    const res = await h.call('list_workspace_files', { directory: 'a/'.repeat(100_000) });
    expect(res.content).toMatch(/^Error: Path too long: 200000 bytes, more than the 4096 allowed/);
  });
});
