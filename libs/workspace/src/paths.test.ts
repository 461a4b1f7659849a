import { promises as fsp } from 'node:fs';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '@agentloop/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PathLimitError, PathOutsideWorkspaceError, WorkspaceError, WorkspacePermissionError } from './errors.js';
import { MAX_NAME_BYTES, MAX_PATH_BYTES, MAX_PATH_SEGMENTS, resolveWorkspacePath } from './paths.js';
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
  vi.restoreAllMocks();
  await tmp[Symbol.asyncDispose]();
});

/** Counts the filesystem calls path resolution makes (it uses fs.promises). */
function countFsCalls(): () => number {
  const spies = (['realpath', 'lstat', 'readlink', 'stat'] as const).map((name) => vi.spyOn(fsp, name));
  return () => spies.reduce((n, s) => n + s.mock.calls.length, 0);
}

const read = (p: string) => ws.resolve(p, { access: 'read' });
const write = (p: string) => ws.resolve(p, { access: 'write' });

describe('resolveWorkspacePath: the reserved .agentloop/ (hardening)', () => {
  it.each(['.agentloop', '.agentloop/effects/x.json', './.agentloop/effects', 'outputs/../.agentloop/effects/x.json'])(
    'refuses to read or write %s',
    async (p) => {
      await mkdir(path.join(ws.root, '.agentloop', 'effects'), { recursive: true });
      await writeFile(path.join(ws.root, '.agentloop', 'effects', 'x.json'), '{}');
      await expect(read(p)).rejects.toThrow(/reserved/);
      await expect(write(p)).rejects.toThrow(WorkspacePermissionError);
      await expect(ws.inspect(p)).rejects.toThrow(/reserved/);
    },
  );

  it('refuses it through a link elsewhere in the workspace', async () => {
    await mkdir(path.join(ws.root, '.agentloop', 'effects'), { recursive: true });
    await writeFile(path.join(ws.root, '.agentloop', 'effects', 'x.json'), '{}');
    await symlink('../.agentloop', path.join(ws.root, 'outputs', 'e'));
    await expect(read('outputs/e/effects/x.json')).rejects.toThrow(/reserved/);
    await expect(write('outputs/e/effects/y.json')).rejects.toThrow(/reserved/);
  });

  it('leaves other names that start alike alone', async () => {
    await writeFile(path.join(ws.root, 'outputs', '.agentloop'), 'a file of the model');
    expect((await read('outputs/.agentloop')).exists).toBe(true);
    expect((await read('.agentloopx')).exists).toBe(false);
  });
});

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

  it.each([
    '%2e%2e/%2e%2e/etc/passwd',
    '..%2f..%2fetc%2fpasswd',
    '..\\..\\etc\\passwd',
    '....//....//etc/passwd',
    '~/etc/passwd',
    '.../etc/passwd',
    '\uff0e\uff0e/\uff0e\uff0e/etc/passwd',
  ])('keeps the odd form %s inside the workspace as a literal name', async (p) => {
    const r = await read(p);
    expect(r.real.startsWith(ws.root + path.sep)).toBe(true);
    expect(r.exists).toBe(false);
  });

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
    await expect(resolveWorkspacePath(ws.root, 'uploads/sk', { access: 'read', readOnlyRoots: [skillsRoot] })).rejects.toThrow(PathOutsideWorkspaceError);
  });
});

describe('resolveWorkspacePath: write permissions', () => {
  it('refuses writing to skills/', async () => {
    await expect(write('skills/pdf/SKILL.md')).rejects.toThrow('Permission denied: Cannot write to skills/. Only outputs/, temp/, uploads/ are writable.');
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

describe('resolveWorkspacePath: limits checked before any filesystem work (issue 18)', () => {
  const deep = (segments: number) => `uploads/${'a/'.repeat(segments - 2)}a`;

  it('refuses a 200 KB path with the limit in the message and makes no filesystem call', async () => {
    const calls = countFsCalls();
    const long = `uploads/${'a/'.repeat(100_000)}x.txt`;
    const err = await read(long).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PathLimitError);
    expect((err as PathLimitError).code).toBe('INVALID_ARGUMENT');
    expect((err as Error).message).toMatch(
      new RegExp(
        `^Path too long: ${Buffer.byteLength(long)} bytes, more than the ${MAX_PATH_BYTES} allowed \\(Linux PATH_MAX\\); use a shorter path: uploads/a/a/`,
      ),
    );
    // Only the head of the path is echoed.
    expect((err as Error).message.length).toBeLessThan(300);
    expect(calls()).toBe(0);
  });

  it('refuses a 20 KB path within the same turn of the event loop (nothing else has to wait for it)', async () => {
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    await expect(read('a/'.repeat(10_000))).rejects.toThrow(PathLimitError);
    expect(turned).toBe(false);
  });

  it('refuses a 4,000-segment path as too deep (under the byte limit) without touching the disk', async () => {
    const calls = countFsCalls();
    const input = './'.repeat(2_000).slice(0, -1);
    expect(Buffer.byteLength(input)).toBeLessThanOrEqual(MAX_PATH_BYTES);
    await expect(read(input)).rejects.toThrow(`Path too deep: 2000 segments, more than the ${MAX_PATH_SEGMENTS} allowed`);
    await expect(write(deep(MAX_PATH_SEGMENTS + 1))).rejects.toThrow(PathLimitError);
    expect(calls()).toBe(0);
  });

  it('refuses a name longer than NAME_MAX (255 bytes), counted in UTF-8 bytes', async () => {
    await expect(write(`outputs/${'é'.repeat(128)}.txt`)).rejects.toThrow(
      `Path has a name of 260 bytes, more than the ${MAX_NAME_BYTES} allowed for one file or folder name (Linux NAME_MAX)`,
    );
    expect((await write(`outputs/${'x'.repeat(MAX_NAME_BYTES)}`)).exists).toBe(false);
  });

  it('shows an absolute path inside the workspace relative, truncated, and never the host path', async () => {
    const err = await read(path.join(ws.root, 'uploads', 'b'.repeat(5_000))).catch((e: unknown) => e);
    expect(String(err)).toContain(`Path too long: ${Buffer.byteLength(ws.root) + 5_009} bytes`);
    expect(String(err)).toContain(`: uploads/bbbb`);
    expect(String(err)).toMatch(/…$/);
    expect(String(err)).not.toContain(tmp.path);
    const elsewhere = await read(`/srv/${'c'.repeat(5_000)}`).catch((e: unknown) => e);
    expect(String(elsewhere)).toContain('(an absolute path outside the workspace)');
    expect(String(elsewhere)).not.toContain('/srv/');
  });

  it('accepts a path at the limits (128 segments, missing) and resolves it with a bounded number of filesystem calls', async () => {
    const calls = countFsCalls();
    const r = await write(deep(MAX_PATH_SEGMENTS));
    expect(r.exists).toBe(false);
    expect(r.real).toBe(path.join(ws.root, deep(MAX_PATH_SEGMENTS)));
    // realpath of the path and of its folder, a bisection for the deepest existing folder
    // (log2 128 = 7 realpath calls), one lstat for the first missing segment. It used to be 129 calls.
    expect(calls()).toBeLessThanOrEqual(10);
  });

  it('follows a dangling link at the end of a deep tree with a few filesystem calls, letting a concurrent setImmediate run meanwhile', async () => {
    const dirs = `uploads/${'d/'.repeat(60)}`;
    await mkdir(path.join(ws.root, dirs), { recursive: true });
    await symlink('nowhere', path.join(ws.root, dirs, 'dangling'));
    const calls = countFsCalls();
    let ticks = 0;
    let settled = false;
    const tick = () => {
      ticks++;
      if (!settled) setImmediate(tick);
    };
    setImmediate(tick);
    const r = await write(`${dirs}dangling/x.txt`);
    settled = true;
    expect(r.real).toBe(path.join(ws.root, dirs, 'nowhere', 'x.txt'));
    expect(ticks).toBeGreaterThan(1);
    // realpath of the path and of its folder, a bisection over 62 segments (6 calls), then by hand:
    // lstat of the link, its readlink, lstat of the missing target.
    expect(calls()).toBeLessThanOrEqual(11);
  });

  it('stops at once when the call has been aborted', async () => {
    const calls = countFsCalls();
    const reason = new Error('budget spent');
    await expect(ws.resolve('uploads/a.txt', { access: 'read', signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(calls()).toBe(0);
  });

  it('gives up on a chain of more than 40 links', async () => {
    for (let i = 0; i < 45; i++) await symlink(`l${i + 1}`, path.join(ws.root, 'uploads', `l${i}`));
    await expect(write('uploads/l0')).rejects.toThrow('Cannot follow symbolic link: uploads/l0 is a link loop or was replaced by a link');
  });
});

describe('resolveWorkspacePath: enforceWritable false (INSPECT)', () => {
  it('reports a target in skills/ or at the root instead of refusing it, but still refuses leaving the workspace', async () => {
    const look = (p: string) => ws.resolve(p, { access: 'write', enforceWritable: false });
    expect((await look('skills/pdf/SKILL.md')).relative).toBe('skills/pdf/SKILL.md');
    expect((await look('notes.txt')).relative).toBe('notes.txt');
    await symlink(outside, path.join(ws.root, 'outputs', 'out'));
    await expect(look('outputs/out/x')).rejects.toThrow(PathOutsideWorkspaceError);
  });
});
