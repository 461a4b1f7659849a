import { constants, promises as fs, type promises } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolError, WorkspacePermissionError } from '../errors.js';
import { errnoCode, mapFsError } from '@agentloop/workspace';
import { defineTool, type ToolDefinition } from '../registry.js';

export const WriteFileArgs = z.object({
  file_path: z.string().min(1).describe('Workspace-relative path under outputs/, temp/ or uploads/, e.g. outputs/report.md'),
  content: z.string().describe('Text to write (UTF-8)'),
  append: z.boolean().default(false).describe('Append to the file instead of replacing it'),
});
export type WriteFileArgs = z.infer<typeof WriteFileArgs>;

export interface WriteFileOptions {
  /** Largest content (UTF-8 bytes) one call accepts. */
  writeMaxBytes: number;
}

/** write_file: only under outputs/, temp/, uploads/; creates parent folders there. */
export function createWriteFileTool(opts: WriteFileOptions): ToolDefinition<typeof WriteFileArgs> {
  return defineTool({
    name: 'write_file',
    description:
      'Write a text file in the workspace (replacing it, or appending with append=true). ' +
      'Only outputs/, temp/ and uploads/ are writable; missing parent folders are created.',
    schema: WriteFileArgs,
    metadata: { category: 'file', tags: ['file', 'write'], idempotent: false, displayName: 'Write File', availableToSubagent: true },
    async execute(args, ctx) {
      const bytes = Buffer.byteLength(args.content, 'utf8');
      if (bytes > opts.writeMaxBytes) {
        throw new ToolError('INVALID_ARGUMENT', `Content too large: ${bytes} bytes (write_file accepts at most ${opts.writeMaxBytes} bytes per call)`);
      }
      const target = await ctx.workspace.resolve(args.file_path, { access: 'write', signal: ctx.signal });
      const parent = path.dirname(target.real);
      let fh: promises.FileHandle | undefined;
      try {
        // The folder must (still) be where the path was checked to lead. It is created only when
        // missing: a mkdir before every write was a filesystem call per call for nothing (issue 9).
        const realParent = await fs.realpath(parent).catch(async (err: unknown) => {
          if (errnoCode(err) !== 'ENOENT') throw err;
          await fs.mkdir(parent, { recursive: true });
          return fs.realpath(parent);
        });
        if (realParent !== parent) throw new WorkspacePermissionError(`the folder of ${target.relative} changed while writing`);
        const mode = args.append ? constants.O_APPEND : constants.O_TRUNC;
        // O_NOFOLLOW: a symlink planted at the (already resolved) target since the check is refused.
        fh = await fs.open(target.real, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK | mode, 0o644);
        const st = await fh.stat();
        if (!st.isFile()) throw new ToolError('INVALID_ARGUMENT', `${target.relative} is not a regular file`);
        await fh.writeFile(args.content, { encoding: 'utf8', signal: ctx.signal });
      } catch (err) {
        throw mapFsError(err, target.relative);
      } finally {
        await fh?.close();
      }
      return `${args.append ? 'Appended' : 'Wrote'} ${bytes} bytes to ${target.relative}`;
    },
  });
}
