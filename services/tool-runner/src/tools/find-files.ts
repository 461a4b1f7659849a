import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { FileNotFoundError, ToolError, displayPath } from '../errors.js';
import { mapFsError } from '@agentloop/workspace';
import { defineTool, type ToolDefinition } from '../registry.js';
import { childPrefix, formatUtc, shownDir } from './format.js';
import { compileGlob, GlobSyntaxError, type CompiledGlob } from './glob.js';
import { walkTree, type WalkOutcome } from './walk.js';

export const FindFilesArgs = z.object({
  pattern: z.string().min(1).describe("Glob pattern, e.g. '*.pdf', '**/*.py', '*report*'"),
  path: z.string().default('.').describe('Workspace folder to search (default: the workspace root)'),
});
export type FindFilesArgs = z.infer<typeof FindFilesArgs>;

export interface FindFilesOptions {
  /** Matches listed at most (newest first); a note says when more matched. */
  maxResults: number;
  /** Directory entries read at most per call (default FIND_MAX_SCANNED); a note says when the walk stopped there. */
  maxScanned?: number;
}

/** Directory entries one find_files call reads at most, whatever the tree. */
export const FIND_MAX_SCANNED = 100_000;
/** Folder levels searched below `path` for a pattern with `**`. */
export const FIND_MAX_DEPTH = 32;

interface Match {
  rel: string;
  size: number;
  mtimeMs: number;
}

/**
 * find_files (seed 001 §1.2): glob by name, newest first, with sizes; hidden
 * files and `.indexes` excluded. Symlinked folders are not descended into (so
 * a link to / cannot be crawled); search inside a skill with path="skills/<id>".
 *
 * Bounded whatever the tenant controls: the pattern (length, brace expansion,
 * matched without regular expressions — see glob.ts), the walk (FIND_MAX_DEPTH
 * levels, FIND_MAX_SCANNED entries, pruned by the pattern, yields to the event
 * loop, stops when the call's budget ends).
 */
export function createFindFilesTool(opts: FindFilesOptions): ToolDefinition<typeof FindFilesArgs> {
  const maxScanned = opts.maxScanned ?? FIND_MAX_SCANNED;
  return defineTool({
    name: 'find_files',
    description:
      "Find files by name with a glob pattern (e.g. '*.pdf', '**/*.py', '*report*'), newest first, with sizes. " +
      "Fast: doesn't read file contents. Use path to search one folder, e.g. path='uploads'.",
    schema: FindFilesArgs,
    metadata: { category: 'file', tags: ['file', 'search', 'glob'], idempotent: true, displayName: 'Find Files', availableToSubagent: true },
    async execute(args, ctx) {
      const { pattern } = args;
      const invalid = (why: string) => new ToolError('INVALID_ARGUMENT', `Invalid pattern: ${shownPattern(pattern)}: ${why}`);
      if (pattern.includes('\0') || pattern.includes('..') || pattern.startsWith('/') || pattern.startsWith('\\') || /^[A-Za-z]:/.test(pattern)) {
        throw invalid('a pattern may not contain ".." or be absolute; choose the folder with the path argument');
      }
      let glob: CompiledGlob;
      try {
        glob = compileGlob(pattern);
      } catch (err) {
        if (err instanceof GlobSyntaxError) throw invalid(`${err.message}; use a simpler pattern`);
        throw err;
      }
      const dir = await ctx.workspace.resolve(args.path, { access: 'read', signal: ctx.signal });
      if (!dir.exists) throw new FileNotFoundError(dir.relative, 'Directory');
      const prefix = childPrefix(dir.relative);
      const matches: Match[] = [];
      let outcome: WalkOutcome;
      try {
        const st = await fs.stat(dir.real);
        if (!st.isDirectory()) throw new ToolError('INVALID_ARGUMENT', `Not a directory: ${dir.relative}`);
        outcome = await walkTree(dir.real, {
          maxDepth: Math.min(glob.maxDepth, FIND_MAX_DEPTH),
          maxEntries: maxScanned,
          signal: ctx.signal,
          enter: (e) => glob.mayContain(e.segments),
          visit: async (e) => {
            if (!glob.matches(e.segments)) return;
            const rel = `${prefix}${e.names.join('/')}`;
            if (e.dirent.isFile()) {
              // Reached through real folders only (links are not descended into): inside by construction.
              const fst = await fs.lstat(e.abs).catch(() => undefined);
              if (fst?.isFile()) matches.push({ rel, size: fst.size, mtimeMs: fst.mtimeMs });
            } else if (e.dirent.isSymbolicLink()) {
              // A matched link must not reveal what lies outside the workspace, not even a size.
              const entry = await ctx.workspace.resolve(rel, { access: 'read', signal: ctx.signal }).catch(() => undefined);
              if (!entry?.exists) return;
              const fst = await fs.stat(entry.real).catch(() => undefined);
              if (fst?.isFile()) matches.push({ rel, size: fst.size, mtimeMs: fst.mtimeMs });
            }
          },
        });
      } catch (err) {
        throw mapFsError(err, dir.relative);
      }

      const where = shownDir(dir.relative);
      const stopped = outcome.truncated ? `\n(Stopped after reading ${maxScanned} entries of ${where}; there may be more matches: narrow the path.)` : '';
      if (matches.length === 0) return `No files matching '${pattern}' in ${where}${stopped}`;
      matches.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
      const shown = matches.slice(0, opts.maxResults);
      const lines = shown.map((f) => `${f.rel} (${f.size} bytes, modified ${formatUtc(new Date(f.mtimeMs))})`);
      const header = `Found ${matches.length} file${matches.length === 1 ? '' : 's'} matching '${pattern}' in ${where} (newest first):`;
      const note =
        matches.length > shown.length
          ? `\n(Showing the ${shown.length} newest of ${matches.length} matches; narrow the pattern or the path to see the others.)`
          : '';
      return `${header}\n${lines.join('\n')}${note}${stopped}`;
    },
  });
}

/** A refused pattern as shown back: its head only, control characters escaped. */
function shownPattern(pattern: string): string {
  const head = Array.from(pattern.slice(0, 160)).slice(0, 80).join('');
  return displayPath(head.length < pattern.length ? `${head}…` : head);
}
