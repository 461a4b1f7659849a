import { promises as fsPromises } from 'node:fs';
import { mkdir, readFile, readdir, realpath, rm, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '@agentloop/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkspaceError } from './errors.js';
import { createTempDir, type TempDir } from './temp-dir.js';
import { WorkspaceManager, validateWorkspaceId, type WorkspaceMetadata } from './workspace.js';

let tmp: TempDir;
let manager: WorkspaceManager;
let root: string;

beforeEach(async () => {
  tmp = await createTempDir();
  root = path.join(tmp.path, 'ws-root');
  manager = new WorkspaceManager({ root, logger: silentLogger() });
});
afterEach(async () => {
  await tmp[Symbol.asyncDispose]();
});

describe('WorkspaceManager.ensureCreated', () => {
  it('says created only when the thread’s folder was not there', async () => {
    expect((await manager.ensureCreated('tenant-1', 'thread-1')).created).toBe(true);
    expect((await manager.ensureCreated('tenant-1', 'thread-1')).created).toBe(false);
    // A process that never ensured it finds the folder there.
    const other = new WorkspaceManager({ root, logger: silentLogger() });
    expect((await other.ensureCreated('tenant-1', 'thread-1')).created).toBe(false);
    // Another thread of the same tenant: its own folder is new.
    expect((await other.ensureCreated('tenant-1', 'thread-2')).created).toBe(true);
    await manager.delete('tenant-1', 'thread-1');
    expect((await manager.ensureCreated('tenant-1', 'thread-1')).created).toBe(true);
  });
});

describe('validateWorkspaceId', () => {
  it.each(['tenant-1', 'a', 'thread_2.v1', 'ns:thread-1', '0b6c1f0e-4a8e-4a8e-9f3e-3c2f5a6b7c8d', 'x'.repeat(128)])('accepts %s', (id) => {
    expect(() => validateWorkspaceId('thread_id', id)).not.toThrow();
  });

  it.each(['', '..', '../x', 'a/b', 'a\\b', '.hidden', '-flag', 'a..b', 'x'.repeat(129), 'a\0b', ' a', 'é'])('rejects %j', (id) => {
    expect(() => validateWorkspaceId('thread_id', id)).toThrow(WorkspaceError);
  });

  it('names the field in the message', () => {
    expect(() => validateWorkspaceId('tenant_id', '../x')).toThrow('Invalid tenant_id "../x"');
  });
});

describe('WorkspaceManager', () => {
  it('creates <root>/<tenant>/<thread>/ with its folders and metadata on first use', async () => {
    const ws = await manager.ensure('tenant-a', 'thread-1');
    expect(ws.root).toBe(path.join(await realRoot(), 'tenant-a', 'thread-1'));
    expect((await readdir(ws.root)).sort()).toEqual(['.metadata.json', 'outputs', 'skills', 'temp', 'uploads']);
    const meta = JSON.parse(await readFile(path.join(ws.root, '.metadata.json'), 'utf8')) as WorkspaceMetadata;
    expect(meta.thread_id).toBe('thread-1');
    expect(meta.tenant_id).toBe('tenant-a');
    expect(Number.isNaN(Date.parse(meta.created_at))).toBe(false);
  });

  it('keeps the original metadata when ensured again', async () => {
    const ws = await manager.ensure('tenant-a', 'thread-1');
    const first = await readFile(path.join(ws.root, '.metadata.json'), 'utf8');
    await Promise.all([manager.ensure('tenant-a', 'thread-1'), manager.ensure('tenant-a', 'thread-1')]);
    expect(await readFile(path.join(ws.root, '.metadata.json'), 'utf8')).toBe(first);
  });

  it('recreates a missing folder on the next ensure once its remembered check has expired', async () => {
    const fresh = new WorkspaceManager({ root, logger: silentLogger(), ensuredTtlMs: 0 });
    const ws = await fresh.ensure('tenant-a', 'thread-1');
    await rm(path.join(ws.root, 'outputs'), { recursive: true });
    await fresh.ensure('tenant-a', 'thread-1');
    expect((await stat(path.join(ws.root, 'outputs'))).isDirectory()).toBe(true);
  });

  it('trusts a workspace it ensured moments ago without touching the disk again', async () => {
    const ws = await manager.ensure('tenant-a', 'thread-2');
    await rm(path.join(ws.root, 'outputs'), { recursive: true });
    await manager.ensure('tenant-a', 'thread-2');
    await expect(stat(path.join(ws.root, 'outputs'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('forgets a deleted workspace at once: the next ensure creates it again', async () => {
    const ws = await manager.ensure('tenant-a', 'thread-3');
    await manager.delete('tenant-a', 'thread-3');
    await manager.ensure('tenant-a', 'thread-3');
    expect((await stat(path.join(ws.root, 'outputs'))).isDirectory()).toBe(true);
  });

  it('separates tenants that use the same thread id', async () => {
    const a = await manager.ensure('tenant-a', 'thread-1');
    const b = await manager.ensure('tenant-b', 'thread-1');
    expect(a.root).not.toBe(b.root);
  });

  it('refuses ids that could leave the root', async () => {
    await expect(manager.ensure('..', 'thread-1')).rejects.toThrow('Invalid tenant_id');
    await expect(manager.ensure('tenant-a', '../../etc')).rejects.toThrow('Invalid thread_id');
    expect(await readdir(await realRoot())).toEqual([]);
  });

  it('refuses a workspace folder that was replaced by a symlink', async () => {
    const elsewhere = path.join(tmp.path, 'elsewhere');
    await mkdir(elsewhere);
    await mkdir(path.join(root, 'tenant-a'), { recursive: true });
    await symlink(elsewhere, path.join(root, 'tenant-a', 'thread-1'));
    await expect(manager.ensure('tenant-a', 'thread-1')).rejects.toThrow('Permission denied: the workspace of thread thread-1 is not a plain directory');
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('deletes a workspace and reports whether it existed', async () => {
    const ws = await manager.ensure('tenant-a', 'thread-1');
    expect(await manager.delete('tenant-a', 'thread-1')).toBe(true);
    await expect(stat(ws.root)).rejects.toThrow();
    expect(await manager.delete('tenant-a', 'thread-1')).toBe(false);
  });

  it("keeps a thread's private folder beside the workspaces, outside its workspace, and deletes it with the thread (hardening)", async () => {
    const ws = await manager.ensure('tenant-a', 'thread-1');
    const priv = await manager.privateDir('tenant-a', 'thread-1');
    const real = (await manager.init()).root;
    expect(priv).toBe(path.join(real, '.agentloop', 'tenant-a', 'thread-1'));
    expect(path.relative(ws.root, priv).startsWith('..')).toBe(true);
    await mkdir(path.join(priv, 'effects'), { recursive: true });
    expect(await manager.delete('tenant-a', 'thread-1')).toBe(true);
    await expect(stat(priv)).rejects.toMatchObject({ code: 'ENOENT' });
    // A deletion retried after a crash that left only the private folder removes it too.
    await mkdir(priv, { recursive: true });
    expect(await manager.delete('tenant-a', 'thread-1')).toBe(false);
    await expect(stat(priv)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(manager.privateDir('tenant-a', '../x')).rejects.toThrow(WorkspaceError);
  });

  it('deleting a workspace leaves the target of a symlink inside it alone', async () => {
    const keep = path.join(tmp.path, 'keep');
    await mkdir(keep);
    const ws = await manager.ensure('tenant-a', 'thread-1');
    await symlink(keep, path.join(ws.root, 'skills', 'pdf'));
    await manager.delete('tenant-a', 'thread-1');
    expect((await stat(keep)).isDirectory()).toBe(true);
  });

  it('lists the top level of a workspace', async () => {
    const ws = await manager.ensure('tenant-a', 'thread-1');
    expect(await manager.entries(ws)).toEqual(['.metadata.json', 'outputs/', 'skills/', 'temp/', 'uploads/']);
  });

  it('redacts the host path of the root from messages', async () => {
    const ws = await manager.ensure('tenant-a', 'thread-1');
    const msg = `ENOENT: no such file or directory, open '${ws.root}/outputs/x.txt'`;
    expect(ws.redact(msg)).toBe("ENOENT: no such file or directory, open 'outputs/x.txt'");
    expect(manager.redact(`${await realRoot()}/t`)).toBe('<workspace-root>/t');
  });
});

async function realRoot(): Promise<string> {
  return (await manager.init()).root;
}

describe('WorkspaceManager.locate', () => {
  it('trusts a workspace it ensured lately without looking, and looks again once it deleted it', async () => {
    await manager.ensure('tenant-1', 'thread-1');
    const dir = path.join(await realpath(root), 'tenant-1', 'thread-1');
    const spy = vi.spyOn(fsPromises, 'realpath');
    try {
      expect((await manager.locate('tenant-1', 'thread-1')).exists).toBe(true);
      expect(spy).not.toHaveBeenCalled();
      await manager.delete('tenant-1', 'thread-1');
      expect((await manager.locate('tenant-1', 'thread-1')).exists).toBe(false);
      expect(spy).toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
    // Another process (no ensure of its own) looks, and refuses a workspace that is not a plain folder.
    await mkdir(path.join(tmp.path, 'elsewhere'), { recursive: true });
    await symlink(path.join(tmp.path, 'elsewhere'), dir);
    const other = new WorkspaceManager({ root, logger: silentLogger() });
    await expect(other.locate('tenant-1', 'thread-1')).rejects.toThrow(/not a plain directory/);
  });
});
