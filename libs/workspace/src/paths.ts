import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileNotFoundError, PathLimitError, PathOutsideWorkspaceError, WorkspaceError, WorkspacePermissionError, displayPath } from './errors.js';

/** Top-level workspace folders a tool may write to (seed 001 §1.3). */
export const WRITABLE_DIRS = ['outputs', 'temp', 'uploads'] as const;
/** Folders every workspace has. skills/ holds read-only (usually symlinked) skills. */
export const WORKSPACE_DIRS = ['skills', 'uploads', 'outputs', 'temp'] as const;

/**
 * Top-level workspace names no tool, upload or download may reach, for reading or writing.
 * `.agentloop/` held tool-runner's replay log before it moved out of the workspace (PRIVATE_DIR in
 * workspace.ts); tool-runner reads it only to import the entries of calls begun before that move,
 * so a model must not read or forge them there either.
 */
export const RESERVED_NAMES = ['.agentloop'] as const;

const WRITABLE_LIST = WRITABLE_DIRS.map((d) => `${d}/`).join(', ');

/**
 * Longest path accepted, in UTF-8 bytes: Linux's PATH_MAX. No path a tool can
 * open is longer, so refusing more costs nothing and keeps resolution bounded.
 */
export const MAX_PATH_BYTES = 4096;
/** Longest single name (path segment), in UTF-8 bytes: Linux's NAME_MAX (ext4, xfs, btrfs, tmpfs). */
export const MAX_NAME_BYTES = 255;
/**
 * Most segments a path may have (`a/b/c` has 3; `.` and `..` count). PATH_MAX
 * alone still allows 2,048 one-letter segments, each a filesystem call; no
 * workspace needs more than a few dozen levels.
 */
export const MAX_PATH_SEGMENTS = 128;
/** Symlinks followed by hand before giving up, like the kernel's MAXSYMLINKS. */
export const MAX_SYMLINK_HOPS = 40;
/**
 * Path components looked at while resolving one path, symlink targets included
 * (40 hops of PATH_MAX-long targets could otherwise add ~80,000 of them).
 */
const MAX_RESOLVE_STEPS = 1024;
/** Characters of a refused path shown in its error message. */
const SHOWN_PATH_CHARS = 64;

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
  /**
   * With `access: 'write'`, whether to refuse targets outside outputs/, temp/,
   * uploads/ (default true). False resolves exactly as a write would but only
   * reports where it lands (INSPECT, before approval); containment still holds.
   */
  enforceWritable?: boolean;
  /** Stops the resolution between filesystem calls (the tool call's budget). */
  signal?: AbortSignal;
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
 * Checks a path against MAX_PATH_BYTES, MAX_NAME_BYTES and MAX_PATH_SEGMENTS
 * without touching the filesystem; throws PathLimitError. Costs O(length): a
 * 200 KB path is refused in well under a millisecond. `workspaceRoot` (when
 * given) is removed from an absolute path shown in the message.
 */
export function checkPathLimits(input: string, workspaceRoot?: string): void {
  const bytes = Buffer.byteLength(input, 'utf8');
  if (bytes > MAX_PATH_BYTES) {
    throw new PathLimitError(
      `Path too long: ${bytes} bytes, more than the ${MAX_PATH_BYTES} allowed (Linux PATH_MAX); use a shorter path: ${shownPathHead(input, workspaceRoot)}`,
    );
  }
  let segments = 0;
  for (const seg of input.split('/')) {
    if (seg === '') continue;
    segments++;
    const segBytes = Buffer.byteLength(seg, 'utf8');
    if (segBytes > MAX_NAME_BYTES) {
      throw new PathLimitError(
        `Path has a name of ${segBytes} bytes, more than the ${MAX_NAME_BYTES} allowed for one file or folder name (Linux NAME_MAX); ` +
          `use a shorter name: ${shownPathHead(input, workspaceRoot)}`,
      );
    }
  }
  if (segments > MAX_PATH_SEGMENTS) {
    throw new PathLimitError(
      `Path too deep: ${segments} segments, more than the ${MAX_PATH_SEGMENTS} allowed; use a shorter path: ${shownPathHead(input, workspaceRoot)}`,
    );
  }
}

/**
 * The head of a refused path as it may be shown: workspace-relative when it is
 * an absolute path inside the workspace, never another absolute host path,
 * at most SHOWN_PATH_CHARS characters, control characters escaped.
 */
export function shownPathHead(input: string, workspaceRoot?: string): string {
  let shown = input;
  if (path.isAbsolute(input)) {
    if (workspaceRoot !== undefined && input === workspaceRoot) shown = '.';
    else if (workspaceRoot !== undefined && input.startsWith(`${workspaceRoot}${path.sep}`)) shown = input.slice(workspaceRoot.length + 1);
    else shown = '(an absolute path outside the workspace)';
  }
  // Whole code points only (no lone surrogate at the cut).
  const head = Array.from(shown.slice(0, SHOWN_PATH_CHARS * 2)).slice(0, SHOWN_PATH_CHARS);
  const cut = head.join('');
  return displayPath(cut.length < shown.length ? `${cut}…` : cut);
}

/**
 * Resolves a path given by a model against a workspace and enforces the
 * workspace's rules (seed 001 §1.3, seed 000 §4.1.2):
 *
 * 0. the path's length, name lengths and depth are checked before anything
 *    else (checkPathLimits), so resolution is bounded whatever the input;
 * 1. no NUL byte; relative paths are joined to the workspace, absolute ones must lie inside it;
 * 2. the lexically normalized path must stay inside the workspace (`../../etc/passwd`);
 * 3. containment is checked again AFTER resolving symlinks — for a path that does not exist yet,
 *    the real path of its deepest existing ancestor, following dangling symlinks by hand, since
 *    writing through a dangling link would create its target;
 * 4. writes only under outputs/, temp/, uploads/ (by logical AND real location), unless
 *    `enforceWritable` is false.
 *
 * `workspaceRoot` must be a real absolute path (it need not exist yet). Errors
 * carry workspace-relative text only.
 */
export async function resolveWorkspacePath(workspaceRoot: string, input: string, opts: ResolveOptions): Promise<ResolvedPath> {
  checkPathLimits(input, workspaceRoot);
  if (input.includes('\0')) {
    throw new WorkspaceError('INVALID_ARGUMENT', `Invalid path: ${displayPath(input)} contains a NUL byte`);
  }
  opts.signal?.throwIfAborted();
  const raw = input === '' ? '.' : input;
  const logical = path.isAbsolute(raw) ? path.resolve(raw) : path.resolve(workspaceRoot, raw);
  if (!isWithin(workspaceRoot, logical)) throw new PathOutsideWorkspaceError(input);

  const relNative = path.relative(workspaceRoot, logical);
  const relative = relNative === '' ? '.' : relNative.split(path.sep).join('/');

  let resolved: { real: string; exists: boolean };
  try {
    resolved = await realpathIterative(workspaceRoot, relNative === '' ? [] : relNative.split(path.sep), relative, opts.signal);
  } catch (err) {
    throw mapFsError(err, relative);
  }
  const { real, exists } = resolved;

  const top = relative.split('/')[0] ?? '.';
  assertNotReserved(top, relative);
  const checkWritable = opts.access === 'write' && opts.enforceWritable !== false;
  if (checkWritable) assertWritable(relative);
  if (!isWithin(workspaceRoot, real)) {
    const viaSkills = opts.access === 'read' && top === 'skills' && (opts.readOnlyRoots ?? []).some((r) => isWithin(r, real));
    if (!viaSkills) throw new PathOutsideWorkspaceError(input);
  }

  const realRel = path.relative(workspaceRoot, real).split(path.sep).join('/');
  // A link elsewhere in the workspace (`outputs/e -> ../.agentloop`) reaches no further.
  if (isWithin(workspaceRoot, real)) assertNotReserved(realRel.split('/')[0] ?? '', relative);
  if (checkWritable) {
    // A symlink inside uploads/ that points at skills/ (or the root) must not make them writable.
    assertWritable(realRel === '' ? '.' : realRel);
  }

  if (opts.mustExist && !exists) throw new FileNotFoundError(relative);
  return { relative, logical, real, exists };
}

function assertNotReserved(top: string, relative: string): void {
  if ((RESERVED_NAMES as readonly string[]).includes(top)) {
    throw new WorkspacePermissionError(`${displayPath(relative)} is not accessible: ${top}/ is reserved for AgentLoop`);
  }
}

function assertWritable(relative: string): void {
  const segs = relative === '.' ? [] : relative.split('/');
  const top = segs[0];
  // Writing the folder itself ("outputs") passes here and fails in the filesystem (EISDIR).
  if (top !== undefined && (WRITABLE_DIRS as readonly string[]).includes(top)) return;
  const where = top !== undefined && (segs.length > 1 || (WORKSPACE_DIRS as readonly string[]).includes(top)) ? `${top}/` : 'the workspace root';
  throw new WorkspacePermissionError(`Cannot write to ${where}. Only ${WRITABLE_LIST} are writable.`);
}

const fsError = (code: string, message: string) => Object.assign(new Error(message), { code });

/**
 * realpath that also works for paths that do not exist yet: the real path of
 * the deepest existing ancestor plus the missing tail. Dangling symlinks on the
 * way are followed by hand (writing through one would create its target).
 *
 * One realpath(3) call answers for an existing path. Otherwise the deepest
 * existing prefix is found by bisection (O(log segments) realpath calls) and
 * the rest walked one lstat at a time, in a loop over a stack of pending
 * segments — no recursion, no copy of the path per level — so the cost is at
 * most MAX_RESOLVE_STEPS filesystem calls and O(steps × length) bytes, and
 * `signal` is honoured between calls.
 */
async function realpathIterative(
  root: string,
  segments: readonly string[],
  relative: string,
  signal: AbortSignal | undefined,
): Promise<{ real: string; exists: boolean }> {
  /** realpath of the first `k` segments, or undefined when that prefix does not exist. */
  const realPrefix = async (k: number): Promise<string | undefined> => {
    signal?.throwIfAborted();
    try {
      return await fs.realpath(k === 0 ? root : path.join(root, ...segments.slice(0, k)));
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw err;
    }
  };
  const n = segments.length;
  const whole = await realPrefix(n);
  if (whole !== undefined) return { real: whole, exists: true };
  if (n === 0) return { real: root, exists: false }; // a workspace not created yet

  // The deepest existing prefix, by bisection (if the first k segments exist, so do the first k - 1):
  // O(log n) realpath calls, the usual case (a new file in an existing folder) first.
  let lo = 0;
  let loReal = root;
  let hi = n;
  const parent = n > 1 ? await realPrefix(n - 1) : undefined;
  if (parent !== undefined) {
    lo = n - 1;
    loReal = parent;
  } else {
    hi = Math.max(n - 1, 1);
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      const real = await realPrefix(mid);
      if (real === undefined) hi = mid;
      else {
        lo = mid;
        loReal = real;
      }
    }
  }

  // From there on by hand, one lstat per segment: the next segment is missing (done), or a dangling
  // symlink to follow. Next segment last: pop() is O(1), and a link's target is pushed in front of what remains.
  const pending = segments.slice(lo).reverse();
  let current = loReal;
  let hops = 0;
  let steps = 0;
  while (pending.length > 0) {
    signal?.throwIfAborted();
    if (++steps > MAX_RESOLVE_STEPS) {
      throw new PathLimitError(`Path too deep once symbolic links are followed: more than ${MAX_RESOLVE_STEPS} components: ${shownPathHead(relative)}`);
    }
    const seg = pending.pop() as string;
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      // `current` is real, so its parent is the physical "..".
      current = path.dirname(current);
      continue;
    }
    const candidate = path.join(current, seg);
    let isLink: boolean;
    try {
      isLink = (await fs.lstat(candidate)).isSymbolicLink();
    } catch (err) {
      const code = errnoCode(err);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      // Missing (or under a file): the rest is appended lexically; a write creates it as named.
      return { real: path.resolve(candidate, ...pending.reverse()), exists: false };
    }
    if (!isLink) {
      current = candidate;
      continue;
    }
    if (++hops > MAX_SYMLINK_HOPS) throw fsError('ELOOP', 'too many symbolic links');
    signal?.throwIfAborted();
    const target = await fs.readlink(candidate);
    if (path.isAbsolute(target)) current = path.parse(target).root;
    const parts = target.split('/');
    for (let i = parts.length - 1; i >= 0; i--) pending.push(parts[i] as string);
  }
  return { real: current, exists: true };
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
      // The workspace's own location counts towards the host's PATH_MAX too.
      return new PathLimitError(`Path too long for the filesystem: ${shownPathHead(relative)}`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new WorkspaceError('UNAVAILABLE', `No space left to write ${shown}`);
    default:
      return err;
  }
}
