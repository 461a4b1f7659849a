import { promises as fsPromises } from 'node:fs';
import { mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '@agentloop/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PathLimitError, PathOutsideWorkspaceError } from './errors.js';
import { MAX_INSPECT_TAIL_BYTES } from './inspect.js';
import { createTempDir, type TempDir } from './temp-dir.js';
import { WorkspaceManager, type Workspace } from './workspace.js';

let tmp: TempDir;
let manager: WorkspaceManager;
let ws: Workspace;

beforeEach(async () => {
  tmp = await createTempDir();
  manager = new WorkspaceManager({ root: path.join(tmp.path, 'root'), logger: silentLogger() });
  ws = await manager.ensure('tenant-a', 'thread-1');
});
afterEach(async () => {
  await tmp[Symbol.asyncDispose]();
});

describe('Workspace.inspect: where a write would land', () => {
  it('reports an absolute path into uploads/ as uploads/<name>', async () => {
    expect(await ws.inspect(path.join(ws.root, 'uploads', 'x'))).toEqual({ relative: 'uploads/x', exists: false, isFile: false, tail: '' });
  });

  it('does not open an existing path when no tail is asked for (isFile then unknown)', async () => {
    await writeFile(path.join(ws.root, 'outputs', 'a.txt'), 'data');
    const opens = vi.spyOn(fsPromises, 'open');
    try {
      expect(await ws.inspect('outputs/a.txt')).toEqual({ relative: 'outputs/a.txt', exists: true, isFile: undefined, tail: '' });
      expect(opens).not.toHaveBeenCalled();
      expect(await ws.inspect('outputs/a.txt', { tailBytes: 2 })).toEqual({ relative: 'outputs/a.txt', exists: true, isFile: true, tail: 'ta' });
      expect(opens).toHaveBeenCalledTimes(1);
    } finally {
      opens.mockRestore();
    }
  });

  it('normalizes the spelling of the path', async () => {
    expect((await ws.inspect('outputs/../uploads/./report.pdf')).relative).toBe('uploads/report.pdf');
  });

  it('follows a symlink to the real target', async () => {
    await writeFile(path.join(ws.root, 'uploads', 'a.txt'), 'user data');
    await symlink('../uploads', path.join(ws.root, 'outputs', 'link'));
    expect(await ws.inspect('outputs/link/a.txt', { tailBytes: 4 })).toEqual({ relative: 'uploads/a.txt', exists: true, isFile: true, tail: 'data' });
  });

  it('follows a dangling symlink to where the write would create its target', async () => {
    await symlink('../temp/new.txt', path.join(ws.root, 'outputs', 'dangling'));
    expect(await ws.inspect('outputs/dangling')).toMatchObject({ relative: 'temp/new.txt', exists: false });
  });

  it('returns the last tail_bytes of a file, at most 4096, as UTF-8 without a cut character', async () => {
    await writeFile(path.join(ws.root, 'outputs', 'log.txt'), `${'x'.repeat(10_000)}password=`);
    expect((await ws.inspect('outputs/log.txt', { tailBytes: 9 })).tail).toBe('password=');
    expect((await ws.inspect('outputs/log.txt', { tailBytes: 100_000 })).tail).toHaveLength(MAX_INSPECT_TAIL_BYTES);
    expect((await ws.inspect('outputs/log.txt')).tail).toBe('');
    await writeFile(path.join(ws.root, 'outputs', 'utf8.txt'), 'aé€');
    // The last 3 bytes are "€"; 4 bytes start inside "é", whose half is dropped.
    expect((await ws.inspect('outputs/utf8.txt', { tailBytes: 4 })).tail).toBe('€');
  });

  it('reports a folder as existing, without a tail', async () => {
    expect(await ws.inspect('outputs', { tailBytes: 10 })).toEqual({ relative: 'outputs', exists: true, isFile: false, tail: '' });
  });

  it('does not enforce the write rules: a target in skills/ is reported, not refused', async () => {
    expect((await ws.inspect('skills/pdf/SKILL.md')).relative).toBe('skills/pdf/SKILL.md');
  });

  it('refuses what a write refuses before writing: outside the workspace, through a link, too long', async () => {
    await expect(ws.inspect('../../etc/passwd')).rejects.toThrow(PathOutsideWorkspaceError);
    const outside = path.join(tmp.path, 'outside');
    await mkdir(outside);
    await symlink(outside, path.join(ws.root, 'uploads', 'out'));
    await expect(ws.inspect('uploads/out/x')).rejects.toThrow('Path outside workspace: uploads/out/x');
    await expect(ws.inspect(`outputs/${'a/'.repeat(100_000)}`)).rejects.toThrow(PathLimitError);
  });
});

describe('WorkspaceManager.locate', () => {
  it('resolves paths in a workspace that does not exist yet without creating it', async () => {
    const { workspace, exists } = await manager.locate('tenant-a', 'thread-new');
    expect(exists).toBe(false);
    expect(await workspace.inspect(path.join(workspace.root, 'uploads', 'x.txt'))).toMatchObject({ relative: 'uploads/x.txt', exists: false });
    expect(await workspace.inspect('.')).toMatchObject({ relative: '.', exists: false });
    await expect(stat(workspace.root)).rejects.toThrow();
    await expect(manager.locate('tenant-new', 'thread-1').then((l) => stat(l.workspace.root))).rejects.toThrow();
  });

  it('finds an existing workspace', async () => {
    const { workspace, exists } = await manager.locate('tenant-a', 'thread-1');
    expect(exists).toBe(true);
    expect(workspace.root).toBe(ws.root);
  });

  it('refuses a workspace or tenant folder replaced by a symlink', async () => {
    const elsewhere = path.join(tmp.path, 'elsewhere');
    await mkdir(elsewhere);
    await symlink(elsewhere, path.join(path.dirname(ws.root), 'thread-2'));
    await expect(manager.locate('tenant-a', 'thread-2')).rejects.toThrow('not a plain directory');
    await symlink(elsewhere, path.join(path.dirname(path.dirname(ws.root)), 'tenant-b'));
    await expect(manager.locate('tenant-b', 'thread-1')).rejects.toThrow('not a plain directory');
  });

  it('validates the ids', async () => {
    await expect(manager.locate('tenant-a', '../x')).rejects.toThrow('Invalid thread_id');
  });
});
