import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { checkPathLimits, PathLimitError } from '@agentloop/workspace';
import { IndexerError, displayPath } from './errors.js';

/** Same shape as the tool-runner's workspace ids: no separators, no leading dot, no "..". */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export interface WorkspaceFile {
  /** Workspace-relative POSIX path; safe to show. */
  relative: string;
  /** Real absolute path; never show it. */
  real: string;
  /** Opened read-only without following a final symlink; the caller closes it. */
  handle: fs.FileHandle;
  size: number;
  mtimeMs: number;
  ino: number;
}

export interface WorkspaceRoots {
  /** Real path of WORKSPACE_ROOT. */
  root: string;
  /** Real paths symlinks under skills/ may point into. */
  skillRoots: string[];
}

/** Resolves WORKSPACE_ROOT and SKILLS_ROOT to real paths (missing skills root: none allowed). */
export async function resolveRoots(workspaceRoot: string, skillsRoot: string | undefined): Promise<WorkspaceRoots> {
  const abs = path.resolve(workspaceRoot);
  await fs.mkdir(abs, { recursive: true });
  const skillRoots: string[] = [];
  if (skillsRoot) {
    const real = await fs.realpath(path.resolve(skillsRoot)).catch(() => undefined);
    if (real) skillRoots.push(real);
  }
  return { root: await fs.realpath(abs), skillRoots };
}

function isWithin(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Opens a file of a thread's workspace for reading, under the tool-runner's
 * rules (seed 001 §1.3): the lexical path and the real path (symlinks
 * resolved) must both lie inside `<root>/<tenant>/<thread>`; a symlink under
 * skills/ may point into a skills root. The final open refuses a symlink
 * swapped in since (O_NOFOLLOW).
 */
export async function openWorkspaceFile(roots: WorkspaceRoots, tenantId: string, threadId: string, input: string): Promise<WorkspaceFile> {
  for (const [kind, id] of [['tenant_id', tenantId], ['thread_id', threadId]] as const) {
    if (!ID_PATTERN.test(id) || id.includes('..')) {
      throw new IndexerError('INVALID_ARGUMENT', `Invalid ${kind} "${displayPath(id.slice(0, 140))}": expected 1-128 characters from A-Z a-z 0-9 _ . : - starting with a letter or digit`);
    }
  }
  if (input.trim() === '') throw new IndexerError('INVALID_ARGUMENT', 'A file path is required');
  const ws = path.join(roots.root, tenantId, threadId);
  checkLimits(input, ws);
  if (input.includes('\0')) throw new IndexerError('INVALID_ARGUMENT', `Invalid path: ${displayPath(input)} contains a NUL byte`);
  const wsReal = await fs.realpath(ws).catch(() => undefined);
  if (wsReal !== ws) throw new IndexerError('NOT_FOUND', `File not found: ${displayPath(input)} (the thread has no workspace)`);

  const logical = path.isAbsolute(input) ? path.resolve(input) : path.resolve(ws, input);
  if (!isWithin(ws, logical)) throw new IndexerError('PATH_OUTSIDE_WORKSPACE', `Path outside workspace: ${displayPath(input)}`);
  const relative = path.relative(ws, logical).split(path.sep).join('/') || '.';

  let real: string;
  try {
    real = await fs.realpath(logical);
  } catch (err) {
    throw fsError(err, relative);
  }
  if (!isWithin(ws, real)) {
    const viaSkills = relative.split('/')[0] === 'skills' && roots.skillRoots.some((r) => isWithin(r, real));
    if (!viaSkills) throw new IndexerError('PATH_OUTSIDE_WORKSPACE', `Path outside workspace: ${displayPath(input)}`);
  }
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw fsError(err, relative);
  }
  try {
    const st = await handle.stat();
    if (st.isDirectory()) throw new IndexerError('INVALID_ARGUMENT', `${displayPath(relative)} is a directory, not a file`);
    if (!st.isFile()) throw new IndexerError('INVALID_ARGUMENT', `${displayPath(relative)} is not a regular file`);
    return { relative, real, handle, size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * The workspace library's path limits (libs/workspace paths.ts: PATH_MAX, NAME_MAX, 128 segments),
 * checked before any filesystem call, so the tool-runner and the indexer refuse the same paths with
 * the same words; its PathLimitError becomes this service's INVALID_ARGUMENT.
 */
function checkLimits(input: string, workspaceDir: string): void {
  try {
    checkPathLimits(input, workspaceDir);
  } catch (err) {
    if (err instanceof PathLimitError) throw new IndexerError('INVALID_ARGUMENT', err.message, { cause: err });
    throw err;
  }
}

function fsError(err: unknown, relative: string): unknown {
  const code = (err as { code?: unknown })?.code;
  const shown = displayPath(relative);
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new IndexerError('NOT_FOUND', `File not found: ${shown}`);
    case 'EACCES':
    case 'EPERM':
      return new IndexerError('PERMISSION_DENIED', `Permission denied: ${shown} is not accessible`);
    case 'ELOOP':
      return new IndexerError('INVALID_ARGUMENT', `Cannot follow symbolic link: ${shown} is a link loop or was replaced by a link`);
    case 'ENAMETOOLONG':
      return new IndexerError('INVALID_ARGUMENT', `Path too long: ${shown}`);
    default:
      return err;
  }
}
