import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileNotFoundError, PathOutsideWorkspaceError, WorkspaceError, WorkspacePermissionError, displayPath } from './errors.js';

/** Top-level workspace folders a tool may write to (seed 001 §1.3). */
export const WRITABLE_DIRS = ['outputs', 'temp', 'uploads'] as const;
/** Folders every workspace has. skills/ holds read-only (usually symlinked) skills. */
export const WORKSPACE_DIRS = ['skills', 'uploads', 'outputs', 'temp'] as const;

const WRITABLE_LIST = WRITABLE_DIRS.map((d) => `${d}/`).join(', ');
/** Symlinks followed by hand before giving up, like the kernel's MAXSYMLINKS. */
const MAX_SYMLINK_HOPS = 40;

export type PathAccess = 'read' | 'write';

export interface ResolveOptions {
  access: PathAccess;
  /** Throw FileNotFoundError ("File not found: <path>") when the target does not exist. */
  mustExist?: boolean;
  /**
   * Real directories that symlinks under skills/ may point into, for reads only
   * (skills are symlinked into a workspace from a shared skills folder, seed 000 §4.1.1).
   * Must already be real paths.
   */
  readOnlyRoots?: readonly string[];
}

export interface ResolvedPath {
  /** Workspace-relative logical path, POSIX separators, "." for the root. Safe to show. */
  relative: string;
  /** Absolute logical path (lexically normalized, symlinks not resolved). Never show it. */
  logical: string;
  /** Absolute path with every symlink resolved; the path to operate on. Never show it. */
  real: string;
  exists: boolean;
}

/** True when `child` is `parent` or lies below it (both absolute and normalized). */
export function isWithin(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Resolves a path given by a model against a workspace and enforces the
 * workspace's rules (seed 001 §1.3, seed 000 §4.1.2):
 *
 * 1. no NUL byte; relative paths are joined to the workspace, absolute ones must lie inside it;
 * 2. the lexically normalized path must stay inside the workspace (`../../etc/passwd`);
 * 3. containment is checked again AFTER resolving symlinks — for a path that does not exist yet,
 *    the real path of its deepest existing ancestor, following dangling symlinks by hand, since
 *    writing through a dangling link would create its target;
 * 4. writes only under outputs/, temp/, uploads/ (by logical AND real location).
 *
 * `workspaceRoot` must be a real absolute path. Errors carry workspace-relative text only.
 */
export async function resolveWorkspacePath(workspaceRoot: string, input: string, opts: ResolveOptions): Promise<ResolvedPath> {
  if (input.includes('\0')) {
    throw new WorkspaceError('INVALID_ARGUMENT', `Invalid path: ${displayPath(input)} contains a NUL byte`);
  }
  const raw = input === '' ? '.' : input;
  const logical = path.isAbsolute(raw) ? path.resolve(raw) : path.resolve(workspaceRoot, raw);
  if (!isWithin(workspaceRoot, logical)) throw new PathOutsideWorkspaceError(input);

  const relNative = path.relative(workspaceRoot, logical);
  const relative = relNative === '' ? '.' : relNative.split(path.sep).join('/');

  let resolved: { real: string; exists: boolean };
  try {
    resolved = await realpathDeep(logical, 0);
  } catch (err) {
    throw mapFsError(err, relative);
  }
  const { real, exists } = resolved;

  const top = relative.split('/')[0] ?? '.';
  if (opts.access === 'write') assertWritable(relative);
  if (!isWithin(workspaceRoot, real)) {
    const viaSkills = opts.access === 'read' && top === 'skills' && (opts.readOnlyRoots ?? []).some((r) => isWithin(r, real));
    if (!viaSkills) throw new PathOutsideWorkspaceError(input);
  }

  if (opts.access === 'write') {
    const realRel = path.relative(workspaceRoot, real).split(path.sep).join('/');
    // A symlink inside uploads/ that points at skills/ (or the root) must not make them writable.
    assertWritable(realRel === '' ? '.' : realRel);
  }

  if (opts.mustExist && !exists) throw new FileNotFoundError(relative);
  return { relative, logical, real, exists };
}

function assertWritable(relative: string): void {
  const segs = relative === '.' ? [] : relative.split('/');
  const top = segs[0];
  // Writing the folder itself ("outputs") passes here and fails in the filesystem (EISDIR).
  if (top !== undefined && (WRITABLE_DIRS as readonly string[]).includes(top)) return;
  const where = top !== undefined && (segs.length > 1 || (WORKSPACE_DIRS as readonly string[]).includes(top)) ? `${top}/` : 'the workspace root';
  throw new WorkspacePermissionError(`Cannot write to ${where}. Only ${WRITABLE_LIST} are writable.`);
}

/**
 * realpath that also works for paths that do not exist yet: the real path of
 * the deepest existing ancestor plus the missing tail. Dangling symlinks on the
 * way are followed by hand.
 */
async function realpathDeep(p: string, hops: number): Promise<{ real: string; exists: boolean }> {
  try {
    return { real: await fs.realpath(p), exists: true };
  } catch (err) {
    const code = errnoCode(err);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return { real: p, exists: false };
  const resolvedParent = await realpathDeep(parent, hops);
  const candidate = path.join(resolvedParent.real, path.basename(p));
  if (resolvedParent.exists) {
    const st = await fs.lstat(candidate).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      if (hops >= MAX_SYMLINK_HOPS) throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' });
      const target = path.resolve(resolvedParent.real, await fs.readlink(candidate));
      return { real: (await realpathDeep(target, hops + 1)).real, exists: false };
    }
  }
  return { real: candidate, exists: false };
}

export function errnoCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'string') {
    return (err as { code: string }).code;
  }
  return undefined;
}

/**
 * Maps a Node filesystem error to a message about the workspace-relative path
 * (Node's own messages embed absolute host paths). Non-fs errors pass through.
 */
export function mapFsError(err: unknown, relative: string): unknown {
  const shown = displayPath(relative);
  switch (errnoCode(err)) {
    case 'ENOENT':
      return new FileNotFoundError(relative);
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new WorkspacePermissionError(`${shown} is not accessible`);
    case 'ELOOP':
      return new WorkspaceError('INVALID_ARGUMENT', `Cannot follow symbolic link: ${shown} is a link loop or was replaced by a link`);
    case 'EISDIR':
      return new WorkspaceError('INVALID_ARGUMENT', `${shown} is a directory`);
    case 'ENOTDIR':
      return new WorkspaceError('INVALID_ARGUMENT', `Not a directory: a parent of ${shown} is a file`);
    case 'ENAMETOOLONG':
      return new WorkspaceError('INVALID_ARGUMENT', `Path too long: ${shown}`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new WorkspaceError('UNAVAILABLE', `No space left to write ${shown}`);
    default:
      return err;
  }
}
