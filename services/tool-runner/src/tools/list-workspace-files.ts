import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { FileNotFoundError, ToolError } from '../errors.js';
import { mapFsError } from '@agentloop/workspace';
import { defineTool } from '../registry.js';
import { childPrefix, shownDir } from './format.js';

export const ListWorkspaceFilesArgs = z.object({
  directory: z.string().default('.').describe('Workspace folder to list, e.g. ".", "outputs" or "skills/pdf"'),
});
export type ListWorkspaceFilesArgs = z.infer<typeof ListWorkspaceFilesArgs>;

/** More entries than this in one folder are summarized. */
export const LIST_MAX_ENTRIES = 1_000;

/**
 * Lists one folder with logical workspace-relative paths (seed 000 §4.1.3):
 * "[DIR]  outputs/", "[FILE] outputs/a.txt (12 bytes)", "[SKILL] skills/pdf/"
 * for symlinks, which are shown but never followed. Hidden entries are skipped.
 */
export const listWorkspaceFilesTool = defineTool({
  name: 'list_workspace_files',
  description:
    'List the files and folders of a workspace directory (default: the workspace root). ' +
    'The workspace has skills/ (read-only skills), uploads/ (user files), outputs/ (your results) and temp/.',
  schema: ListWorkspaceFilesArgs,
  metadata: { category: 'file', tags: ['file', 'list', 'workspace'], idempotent: true, displayName: 'List Workspace Files', availableToSubagent: true },
  async execute(args, ctx) {
    // The folder itself must stay inside the workspace once resolved: listing
    // uploads/link -> /etc would otherwise show /etc under a workspace name.
    const dir = await ctx.workspace.resolve(args.directory, { access: 'read' });
    if (!dir.exists) throw new FileNotFoundError(dir.relative, 'Directory');
    let entries;
    try {
      const st = await fs.stat(dir.real);
      if (!st.isDirectory()) throw new ToolError('INVALID_ARGUMENT', `Not a directory: ${dir.relative}; use read_file to read a file`);
      entries = await fs.readdir(dir.real, { withFileTypes: true });
    } catch (err) {
      throw mapFsError(err, dir.relative);
    }
    const prefix = childPrefix(dir.relative);
    const visible = entries.filter((e) => !e.name.startsWith('.')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (visible.length === 0) return `(empty directory: ${shownDir(dir.relative)})`;

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
    if (visible.length > shown.length) {
      lines.push(`(${visible.length - shown.length} more entries not shown; use find_files with a pattern to narrow down)`);
    }
    return lines.join('\n');
  },
});
