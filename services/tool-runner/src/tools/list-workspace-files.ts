import { promises as fs, type Dirent } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { FileNotFoundError, ToolError } from '../errors.js';
import { mapFsError } from '@agentloop/workspace';
import { defineTool, type ToolDefinition } from '../registry.js';
import { childPrefix, shownDir } from './format.js';

export const ListWorkspaceFilesArgs = z.object({
  directory: z.string().default('.').describe('Workspace folder to list, e.g. ".", "outputs" or "skills/pdf"'),
});
export type ListWorkspaceFilesArgs = z.infer<typeof ListWorkspaceFilesArgs>;

/** More entries than this in one folder are summarized. */
export const LIST_MAX_ENTRIES = 1_000;
/** Entries read from one folder at most: a folder of millions is never loaded whole. */
export const LIST_MAX_SCANNED = 100_000;

export interface ListWorkspaceFilesOptions {
  /** Entries read from the folder at most (default LIST_MAX_SCANNED). */
  maxScanned?: number;
}

/**
 * Lists one folder with logical workspace-relative paths (seed 000 §4.1.3):
 * "[DIR]  outputs/", "[FILE] outputs/a.txt (12 bytes)", "[SKILL] skills/pdf/"
 * for symlinks, which are shown but never followed. Hidden entries are skipped.
 * The folder is read through a handle, at most `maxScanned` entries.
 */
export function createListWorkspaceFilesTool(opts: ListWorkspaceFilesOptions = {}): ToolDefinition<typeof ListWorkspaceFilesArgs> {
  const maxScanned = opts.maxScanned ?? LIST_MAX_SCANNED;
  return defineTool({
    name: 'list_workspace_files',
    description:
      'List the files and folders of a workspace directory (default: the workspace root). ' +
      'The workspace has skills/ (read-only skills), uploads/ (user files), outputs/ (your results) and temp/.',
    schema: ListWorkspaceFilesArgs,
    metadata: { category: 'file', tags: ['file', 'list', 'workspace'], idempotent: true, displayName: 'List Workspace Files', availableToSubagent: true },
    async execute(args, ctx) {
      // The folder itself must stay inside the workspace once resolved: listing
      // uploads/link -> /etc would otherwise show /etc under a workspace name.
      const dir = await ctx.workspace.resolve(args.directory, { access: 'read', signal: ctx.signal });
      if (!dir.exists) throw new FileNotFoundError(dir.relative, 'Directory');
      const visible: Dirent[] = [];
      let more = false;
      try {
        const st = await fs.stat(dir.real);
        if (!st.isDirectory()) throw new ToolError('INVALID_ARGUMENT', `Not a directory: ${dir.relative}; use read_file to read a file`);
        const handle = await fs.opendir(dir.real, { bufferSize: 256 });
        try {
          let read = 0;
          for (let d = await handle.read(); d !== null; d = await handle.read()) {
            if (read >= maxScanned) {
              more = true;
              break;
            }
            if (++read % 256 === 0) ctx.signal.throwIfAborted();
            if (!d.name.startsWith('.')) visible.push(d);
          }
        } finally {
          await handle.close().catch(() => undefined);
        }
      } catch (err) {
        throw mapFsError(err, dir.relative);
      }
      const prefix = childPrefix(dir.relative);
      visible.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      if (visible.length === 0 && !more) return `(empty directory: ${shownDir(dir.relative)})`;

      const shown = visible.slice(0, LIST_MAX_ENTRIES);
      const lines = await Promise.all(
        shown.map(async (e) => {
          const rel = `${prefix}${e.name}`;
          if (e.isSymbolicLink()) return `[SKILL] ${rel}/`;
          if (e.isDirectory()) return `[DIR]  ${rel}/`;
          const st = await fs.lstat(path.join(dir.real, e.name)).catch(() => undefined);
          return st ? `[FILE] ${rel} (${st.size} bytes)` : `[FILE] ${rel}`;
        }),
      );
      if (more) {
        lines.push(`(the folder has more than ${maxScanned} entries; only part of it is listed: use find_files with a pattern to narrow down)`);
      } else if (visible.length > shown.length) {
        lines.push(`(${visible.length - shown.length} more entries not shown; use find_files with a pattern to narrow down)`);
      }
      return lines.join('\n');
    },
  });
}

/** list_workspace_files with the default limits. */
export const listWorkspaceFilesTool = createListWorkspaceFilesTool();
