import { promises as fs } from 'node:fs';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import { FileNotFoundError, ToolError, displayPath } from '../errors.js';
import { mapFsError } from '@agentloop/workspace';
import { defineTool, type ToolDefinition } from '../registry.js';
import { childPrefix, formatUtc, shownDir } from './format.js';

export const FindFilesArgs = z.object({
  pattern: z.string().min(1).describe("Glob pattern, e.g. '*.pdf', '**/*.py', '*report*'"),
  path: z.string().default('.').describe('Workspace folder to search (default: the workspace root)'),
});
export type FindFilesArgs = z.infer<typeof FindFilesArgs>;

export interface FindFilesOptions {
  /** Matches listed at most (newest first); a note says when more matched. */
  maxResults: number;
}

interface Match {
  rel: string;
  size: number;
  mtimeMs: number;
}

/**
 * find_files (seed 001 §1.2): glob by name, newest first, with sizes; hidden
 * files and `.indexes` excluded. Symlinked folders are not descended into (so
 * a link to / cannot be crawled); search inside a skill with path="skills/<id>".
 */
export function createFindFilesTool(opts: FindFilesOptions): ToolDefinition<typeof FindFilesArgs> {
  return defineTool({
    name: 'find_files',
    description:
      "Find files by name with a glob pattern (e.g. '*.pdf', '**/*.py', '*report*'), newest first, with sizes. " +
      "Fast: doesn't read file contents. Use path to search one folder, e.g. path='uploads'.",
    schema: FindFilesArgs,
    metadata: { category: 'file', tags: ['file', 'search', 'glob'], idempotent: true, displayName: 'Find Files', availableToSubagent: true },
    async execute(args, ctx) {
      const { pattern } = args;
      if (pattern.includes('\0') || pattern.includes('..') || pattern.startsWith('/') || pattern.startsWith('\\') || /^[A-Za-z]:/.test(pattern)) {
        throw new ToolError(
          'INVALID_ARGUMENT',
          `Invalid pattern: ${displayPath(pattern)}: a pattern may not contain ".." or be absolute; choose the folder with the path argument`,
        );
      }
      const dir = await ctx.workspace.resolve(args.path, { access: 'read' });
      if (!dir.exists) throw new FileNotFoundError(dir.relative, 'Directory');
      let found: string[];
      try {
        const st = await fs.stat(dir.real);
        if (!st.isDirectory()) throw new ToolError('INVALID_ARGUMENT', `Not a directory: ${dir.relative}`);
        found = await glob(pattern, {
          cwd: dir.real,
          dot: false,
          onlyFiles: true,
          followSymbolicLinks: false,
          expandDirectories: false,
          ignore: ['**/.indexes/**'],
          signal: ctx.signal,
        });
      } catch (err) {
        throw mapFsError(err, dir.relative);
      }

      const prefix = childPrefix(dir.relative);
      const candidates = found.filter((m) => !m.split('/').some((part) => part.startsWith('.')));
      const matches: Match[] = [];
      for (const m of candidates) {
        const rel = `${prefix}${m}`;
        // A matched symlink must not reveal what lies outside the workspace, not even a size.
        const entry = await ctx.workspace.resolve(rel, { access: 'read' }).catch(() => undefined);
        if (!entry?.exists) continue;
        const st = await fs.stat(entry.real).catch(() => undefined);
        if (!st?.isFile()) continue;
        matches.push({ rel, size: st.size, mtimeMs: st.mtimeMs });
      }

      const where = shownDir(dir.relative);
      if (matches.length === 0) return `No files matching '${pattern}' in ${where}`;
      matches.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
      const shown = matches.slice(0, opts.maxResults);
      const lines = shown.map((f) => `${f.rel} (${f.size} bytes, modified ${formatUtc(new Date(f.mtimeMs))})`);
      const header = `Found ${matches.length} file${matches.length === 1 ? '' : 's'} matching '${pattern}' in ${where} (newest first):`;
      const note =
        matches.length > shown.length
          ? `\n(Showing the ${shown.length} newest of ${matches.length} matches; narrow the pattern or the path to see the others.)`
          : '';
      return `${header}\n${lines.join('\n')}${note}`;
    },
  });
}
