import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { IndexerError, displayPath } from './errors.js';

/** Same shape as the tool-runner's workspace ids: no separators, no leading dot, no "..". */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/**
 * The path limits of @agentloop/workspace (paths.ts), the same numbers so the
 * tool-runner and the indexer refuse the same paths: Linux's PATH_MAX and
 * NAME_MAX in UTF-8 bytes, and at most 128 segments. Checked before any
 * filesystem call, so a 200 KB path costs microseconds.
 */
export const MAX_PATH_BYTES = 4096;
export const MAX_NAME_BYTES = 255;
export const MAX_PATH_SEGMENTS = 128;
/** Characters of a refused path shown back. */
const SHOWN_PATH_CHARS = 64;

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
  checkPathLimits(input, ws);
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

/** Refuses a path over MAX_PATH_BYTES, MAX_NAME_BYTES or MAX_PATH_SEGMENTS, showing only its workspace-relative head. */
export function checkPathLimits(input: string, workspaceDir: string): void {
  const bytes = Buffer.byteLength(input, 'utf8');
  if (bytes > MAX_PATH_BYTES) {
    throw new IndexerError(
      'INVALID_ARGUMENT',
      `Path too long: ${bytes} bytes, more than the ${MAX_PATH_BYTES} allowed (Linux PATH_MAX); use a shorter path: ${shownHead(input, workspaceDir)}`,
    );
  }
  let segments = 0;
  for (const seg of input.split('/')) {
    if (seg === '') continue;
    segments++;
    const segBytes = Buffer.byteLength(seg, 'utf8');
    if (segBytes > MAX_NAME_BYTES) {
      throw new IndexerError(
        'INVALID_ARGUMENT',
        `Path has a name of ${segBytes} bytes, more than the ${MAX_NAME_BYTES} allowed for one file or folder name (Linux NAME_MAX); use a shorter name: ${shownHead(input, workspaceDir)}`,
      );
    }
  }
  if (segments > MAX_PATH_SEGMENTS) {
    throw new IndexerError(
      'INVALID_ARGUMENT',
      `Path too deep: ${segments} segments, more than the ${MAX_PATH_SEGMENTS} allowed; use a shorter path: ${shownHead(input, workspaceDir)}`,
    );
  }
}

function shownHead(input: string, workspaceDir: string): string {
  let shown = input;
  if (path.isAbsolute(input)) {
    shown = input.startsWith(`${workspaceDir}${path.sep}`) ? input.slice(workspaceDir.length + 1) : '(an absolute path outside the workspace)';
  }
  const head = Array.from(shown.slice(0, SHOWN_PATH_CHARS * 2)).slice(0, SHOWN_PATH_CHARS).join('');
  return displayPath(head.length < shown.length ? `${head}…` : head);
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
