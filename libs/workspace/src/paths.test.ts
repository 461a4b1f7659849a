import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '@agentloop/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PathOutsideWorkspaceError, WorkspaceError, WorkspacePermissionError } from './errors.js';
import { resolveWorkspacePath } from './paths.js';
import { createTempDir, type TempDir } from './temp-dir.js';
import { WorkspaceManager, type Workspace } from './workspace.js';

let tmp: TempDir;
let ws: Workspace;
/** A folder outside the workspace root standing in for /etc. */
let outside: string;

beforeEach(async () => {
  tmp = await createTempDir();
  outside = path.join(tmp.path, 'outside');
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'top secret');
  const manager = new WorkspaceManager({ root: path.join(tmp.path, 'root'), logger: silentLogger() });
  ws = await manager.ensure('tenant-a', 'thread-1');
  await writeFile(path.join(ws.root, 'uploads', 'a.txt'), 'hello');
});
afterEach(async () => {
  await tmp[Symbol.asyncDispose]();
});

const read = (p: string) => ws.resolve(p, { access: 'read' });
const write = (p: string) => ws.resolve(p, { access: 'write' });

describe('resolveWorkspacePath: traversal', () => {
  it('resolves a relative path to its workspace-relative form', async () => {
    const r = await read('uploads/a.txt');
    expect(r.relative).toBe('uploads/a.txt');
    expect(r.real).toBe(path.join(ws.root, 'uploads', 'a.txt'));
    expect(r.exists).toBe(true);
  });

  it.each(['../../etc/passwd', '../thread-2/uploads/a.txt', 'outputs/../../x', 'outputs/./../../../x', '..', '/etc/passwd', '/'])(
    'refuses %s as outside the workspace',
    async (p) => {
      await expect(read(p)).rejects.toThrow(PathOutsideWorkspaceError);
      await expect(read(p)).rejects.toThrow(`Path outside workspace: ${p}`);
    },
  );

  it('refuses an absolute path into another workspace of the same root', async () => {
    const other = path.join(path.dirname(ws.root), 'thread-2', 'uploads', 'a.txt');
    await expect(read(other)).rejects.toThrow(PathOutsideWorkspaceError);
  });

  it('accepts an absolute path inside the workspace and reports it relative', async () => {
    const r = await read(path.join(ws.root, 'uploads', 'a.txt'));
    expect(r.relative).toBe('uploads/a.txt');
  });

  it('normalizes a path that climbs back into the workspace', async () => {
    expect((await read('outputs/../uploads/./a.txt')).relative).toBe('uploads/a.txt');
  });

  it('refuses a NUL byte and shows it escaped', async () => {
    await expect(read('uploads/a.txt\0.png')).rejects.toThrow(WorkspaceError);
    await expect(read('uploads/a.txt\0.png')).rejects.toThrow('Invalid path: uploads/a.txt\\x00.png contains a NUL byte');
  });

  it.each(['%2e%2e/%2e%2e/etc/passwd', '..%2f..%2fetc%2fpasswd', '..\\..\\etc\\passwd', '....//....//etc/passwd', '~/etc/passwd', '.../etc/passwd', '\uff0e\uff0e/\uff0e\uff0e/etc/passwd'])(
    'keeps the odd form %s inside the workspace as a literal name',
    async (p) => {
      const r = await read(p);
      expect(r.real.startsWith(ws.root + path.sep)).toBe(true);
      expect(r.exists).toBe(false);
    },
  );

  it('reports a missing file with its relative path when it must exist', async () => {
    await expect(ws.resolve('./uploads/x.txt', { access: 'read', mustExist: true })).rejects.toThrow('File not found: uploads/x.txt');
  });

  it('never names the host path of the workspace in an error', async () => {
    const err = await ws.resolve('uploads/missing/deep.txt', { access: 'read', mustExist: true }).catch((e: unknown) => e);
    expect(String(err)).not.toContain(tmp.path);
  });
});

describe('resolveWorkspacePath: symlinks', () => {
  it('refuses reading through a symlink in uploads/ to /etc', async () => {
    await symlink('/etc', path.join(ws.root, 'uploads', 'etc'));
    await expect(read('uploads/etc/passwd')).rejects.toThrow('Path outside workspace: uploads/etc/passwd');
    await expect(read('uploads/etc')).rejects.toThrow(PathOutsideWorkspaceError);
  });

  it('refuses writing through a symlink in uploads/ to /etc', async () => {
    await symlink('/etc', path.join(ws.root, 'uploads', 'etc'));
    await expect(write('uploads/etc/agentloop-evil.conf')).rejects.toThrow(PathOutsideWorkspaceError);
  });

  it('refuses a file symlink that points outside', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(ws.root, 'uploads', 'secret.txt'));
    await expect(read('uploads/secret.txt')).rejects.toThrow(PathOutsideWorkspaceError);
    await expect(write('uploads/secret.txt')).rejects.toThrow(PathOutsideWorkspaceError);
  });

  it('refuses a symlinked directory escaping the workspace, for paths that do not exist yet', async () => {
    await symlink(outside, path.join(ws.root, 'outputs', 'out'));
    await expect(write('outputs/out/new/deeper.txt')).rejects.toThrow(PathOutsideWorkspaceError);
    await expect(read('outputs/out/secret.txt')).rejects.toThrow(PathOutsideWorkspaceError);
  });

  it('refuses a dangling symlink whose target is outside (writing would create it)', async () => {
    await symlink(path.join(outside, 'created.txt'), path.join(ws.root, 'uploads', 'dangling'));
    await expect(write('uploads/dangling')).rejects.toThrow(PathOutsideWorkspaceError);
    expect(await readdir(outside)).toEqual(['secret.txt']);
  });

  it('follows a chain of links to its end before deciding', async () => {
    await symlink(outside, path.join(ws.root, 'temp', 'hop2'));
    await symlink(path.join(ws.root, 'temp', 'hop2'), path.join(ws.root, 'uploads', 'hop1'));
    await expect(read('uploads/hop1/secret.txt')).rejects.toThrow(PathOutsideWorkspaceError);
  });

  it('refuses a relative symlink that climbs out', async () => {
    await symlink('../../../../outside', path.join(ws.root, 'uploads', 'up'));
    await expect(read('uploads/up/secret.txt')).rejects.toThrow(PathOutsideWorkspaceError);
  });

  it('refuses writing into skills/ through a symlink in uploads/', async () => {
    await symlink('../skills', path.join(ws.root, 'uploads', 'sk'));
    await expect(write('uploads/sk/pdf.md')).rejects.toThrow('Permission denied: Cannot write to skills/. Only outputs/, temp/, uploads/ are writable.');
  });

  it('allows a symlink that stays inside a writable folder', async () => {
    await symlink('../outputs', path.join(ws.root, 'uploads', 'out'));
    const r = await write('uploads/out/report.md');
    expect(r.real).toBe(path.join(ws.root, 'outputs', 'report.md'));
    expect(r.relative).toBe('uploads/out/report.md');
  });

  it('reports a symlink loop instead of hanging', async () => {
    await symlink('loop-b', path.join(ws.root, 'uploads', 'loop-a'));
    await symlink('loop-a', path.join(ws.root, 'uploads', 'loop-b'));
    await expect(read('uploads/loop-a')).rejects.toThrow(/symbolic link/);
  });
});

describe('resolveWorkspacePath: skills roots', () => {
  it('reads through a skills/ symlink into a read-only root but never writes there', async () => {
    const skillsRoot = path.join(tmp.path, 'skills-root');
    await mkdir(path.join(skillsRoot, 'pdf'), { recursive: true });
    await writeFile(path.join(skillsRoot, 'pdf', 'SKILL.md'), '# pdf');
    await symlink(path.join(skillsRoot, 'pdf'), path.join(ws.root, 'skills', 'pdf'));
    const r = await resolveWorkspacePath(ws.root, 'skills/pdf/SKILL.md', { access: 'read', readOnlyRoots: [skillsRoot] });
    expect(r.exists).toBe(true);
    await expect(resolveWorkspacePath(ws.root, 'skills/pdf/SKILL.md', { access: 'write', readOnlyRoots: [skillsRoot] })).rejects.toThrow(
      WorkspacePermissionError,
    );
    await expect(resolveWorkspacePath(ws.root, 'skills/pdf/SKILL.md', { access: 'read' })).rejects.toThrow(PathOutsideWorkspaceError);
  });

  it('does not extend the read-only root to links outside skills/', async () => {
    const skillsRoot = path.join(tmp.path, 'skills-root');
    await mkdir(skillsRoot);
    await symlink(skillsRoot, path.join(ws.root, 'uploads', 'sk'));
    await expect(resolveWorkspacePath(ws.root, 'uploads/sk', { access: 'read', readOnlyRoots: [skillsRoot] })).rejects.toThrow(
      PathOutsideWorkspaceError,
    );
  });
});

describe('resolveWorkspacePath: write permissions', () => {
  it('refuses writing to skills/', async () => {
    await expect(write('skills/pdf/SKILL.md')).rejects.toThrow(
      'Permission denied: Cannot write to skills/. Only outputs/, temp/, uploads/ are writable.',
    );
  });

  it.each(['notes.txt', '.metadata.json', '.'])('refuses writing %s at the workspace root', async (p) => {
    await expect(write(p)).rejects.toThrow('Permission denied: Cannot write to the workspace root. Only outputs/, temp/, uploads/ are writable.');
  });

  it('refuses writing to another top-level folder', async () => {
    await expect(write('private/x.txt')).rejects.toThrow('Cannot write to private/.');
  });

  it.each(['outputs/hello.txt', 'temp/a/b/c.txt', 'uploads/a.txt'])('allows writing %s', async (p) => {
    const r = await write(p);
    expect(r.relative).toBe(p);
  });
});
