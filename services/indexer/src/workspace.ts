import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { checkPathLimits, displayPath, mapFsError, resolveWorkspacePath, validateWorkspaceId } from '@agentloop/workspace';
import { IndexerError } from './errors.js';

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

/**
 * Opens a file of a thread's workspace for reading, under the workspace library's rules (the
 * tool-runner's: @agentloop/workspace resolveWorkspacePath, seed 001 §1.3): path limits, the
 * lexical and the real path (symlinks resolved) inside `<root>/<tenant>/<thread>`, a symlink under
 * skills/ may point into a skills root. The final open refuses a symlink swapped in since
 * (O_NOFOLLOW).
 */
export async function openWorkspaceFile(roots: WorkspaceRoots, tenantId: string, threadId: string, input: string): Promise<WorkspaceFile> {
  validateWorkspaceId('tenant_id', tenantId);
  validateWorkspaceId('thread_id', threadId);
  if (input.trim() === '') throw new IndexerError('INVALID_ARGUMENT', 'A file path is required');
  const ws = path.join(roots.root, tenantId, threadId);
  // Before any filesystem call (resolveWorkspacePath checks them too, but after this one).
  checkPathLimits(input, ws);
  const wsReal = await fs.realpath(ws).catch(() => undefined);
  if (wsReal !== ws) throw new IndexerError('NOT_FOUND', `File not found: ${displayPath(input)} (the thread has no workspace)`);
  const { relative, real } = await resolveWorkspacePath(ws, input, { access: 'read', mustExist: true, readOnlyRoots: roots.skillRoots });
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw mapFsError(err, relative);
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
