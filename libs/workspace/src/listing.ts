import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileTypeOfName } from './file-types.js';
import { errnoCode } from './paths.js';

/** One regular file of a workspace folder. */
export interface WorkspaceFileEntry {
  /** Workspace-relative POSIX path, e.g. "outputs/report.md". */
  path: string;
  /** File name (last path segment). */
  name: string;
  size: number;
  /** Last modification, ms since the epoch. */
  modifiedMs: number;
  /** Kind by extension (seed 001 §3.1). */
  type: string;
}

export interface ListFilesOptions {
  /** Only files modified at or after this time (ms since the epoch). */
  sinceMs?: number;
  /** Stop after this many files (default 10,000); `truncated` tells. */
  maxFiles?: number;
  /** Folder depth below each listed folder (default 16). */
  maxDepth?: number;
}

export interface FileListing {
  files: WorkspaceFileEntry[];
  truncated: boolean;
}

/**
 * Regular files under some top-level folders of a workspace (e.g. uploads/ and
 * outputs/), sorted by path. Symbolic links are neither followed nor listed,
 * and dot-files (in-progress uploads, metadata) are skipped, so nothing outside
 * the workspace can show up. `workspaceRoot` must be a real path.
 */
export async function listWorkspaceFiles(workspaceRoot: string, folders: readonly string[], opts: ListFilesOptions = {}): Promise<FileListing> {
  const maxFiles = opts.maxFiles ?? 10_000;
  const maxDepth = opts.maxDepth ?? 16;
  const files: WorkspaceFileEntry[] = [];
  let truncated = false;

  const walk = async (dirAbs: string, rel: string, depth: number): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fs.readdir(dirAbs, { withFileTypes: true });
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      throw err;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (truncated) return;
      if (entry.name.startsWith('.')) continue;
      const abs = path.join(dirAbs, entry.name);
      const childRel = `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (depth < maxDepth) await walk(abs, childRel, depth + 1);
        continue;
      }
      if (!entry.isFile()) continue; // symlinks, sockets, fifos
      const st = await fs.lstat(abs).catch(() => undefined);
      if (!st?.isFile()) continue;
      if (opts.sinceMs !== undefined && st.mtimeMs < opts.sinceMs) continue;
      if (files.length >= maxFiles) {
        truncated = true;
        return;
      }
      files.push({ path: childRel, name: entry.name, size: st.size, modifiedMs: Math.floor(st.mtimeMs), type: fileTypeOfName(entry.name) });
    }
  };

  for (const folder of folders) {
    if (folder.includes('/') || folder.includes('\\') || folder.startsWith('.')) throw new Error(`listWorkspaceFiles: "${folder}" is not a top-level folder name`);
    const abs = path.join(workspaceRoot, folder);
    // The top-level folder itself must be a real folder, not a link out of the workspace.
    const st = await fs.lstat(abs).catch(() => undefined);
    if (!st?.isDirectory()) continue;
    await walk(abs, folder, 1);
  }
  return { files, truncated };
}
