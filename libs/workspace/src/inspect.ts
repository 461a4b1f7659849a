import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { errnoCode, mapFsError, resolveWorkspacePath } from './paths.js';

/** Most bytes of a file's end an inspection returns. */
export const MAX_INSPECT_TAIL_BYTES = 4096;

export interface PathInspection {
  /** Workspace-relative POSIX path after symlinks ("." for the root): where a write would land. Safe to show. */
  relative: string;
  /** The resolved path exists. */
  exists: boolean;
  /**
   * The resolved path is an existing regular file; undefined when not looked at (an existing path
   * and no tail asked for: the open that tells would be a filesystem call per write_file's approval
   * for an answer nobody reads, issue 9).
   */
  isFile: boolean | undefined;
  /** The file's last `tailBytes` bytes as UTF-8 (invalid sequences replaced); "" otherwise. */
  tail: string;
}

export interface InspectOptions {
  /** How much of an existing regular file's end to return; clamped to MAX_INSPECT_TAIL_BYTES. */
  tailBytes?: number;
  signal?: AbortSignal;
}

/**
 * Where a write of `input` would land, for approval rules that must judge the
 * real target rather than the model's spelling of it (`/abs/workspace/uploads/x`,
 * `outputs/../uploads/x`, a link in outputs/ to uploads/): the path is resolved
 * by resolveWorkspacePath exactly as write_file does, but the write rules are
 * not enforced, so a refused target is still reported. A path over the limits or
 * outside the workspace (lexically or through a link) throws the same
 * WorkspaceError a write would get. Never creates anything.
 */
export async function inspectWorkspacePath(workspaceRoot: string, input: string, opts: InspectOptions = {}): Promise<PathInspection> {
  const resolved = await resolveWorkspacePath(workspaceRoot, input, {
    access: 'write',
    enforceWritable: false,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const rel = path.relative(workspaceRoot, resolved.real);
  const relative = rel === '' ? '.' : rel.split(path.sep).join('/');
  const wanted = Math.min(Math.max(0, Math.floor(opts.tailBytes ?? 0)), MAX_INSPECT_TAIL_BYTES);
  if (!resolved.exists) return { relative, exists: false, isFile: false, tail: '' };
  if (wanted === 0) return { relative, exists: true, isFile: undefined, tail: '' };

  let fh: fs.FileHandle;
  try {
    // Same flags as read_file: a link swapped in since resolution is refused, a FIFO cannot block.
    fh = await fs.open(resolved.real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    // Gone since, or replaced by a link: report what a write would meet next, without the tail.
    const code = errnoCode(err);
    if (code === 'ENOENT') return { relative, exists: false, isFile: false, tail: '' };
    if (code === 'ELOOP' || code === 'EISDIR' || code === 'ENXIO') return { relative, exists: true, isFile: false, tail: '' };
    throw mapFsError(err, relative);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { relative, exists: true, isFile: false, tail: '' };
    const n = Math.min(wanted, st.size);
    if (n === 0) return { relative, exists: true, isFile: true, tail: '' };
    const buf = Buffer.alloc(n);
    let off = 0;
    while (off < n) {
      const { bytesRead } = await fh.read(buf, off, n - off, st.size - n + off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    return { relative, exists: true, isFile: true, tail: decodeTail(buf.subarray(0, off)) };
  } catch (err) {
    throw mapFsError(err, relative);
  } finally {
    await fh.close();
  }
}

/** UTF-8 of a file's end: a character cut at the start of the window is dropped, not shown as U+FFFD. */
function decodeTail(bytes: Uint8Array): string {
  let start = 0;
  // At most three continuation bytes (10xxxxxx) can belong to a character that began before the window.
  while (start < 3 && start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start++;
  return new TextDecoder('utf-8').decode(bytes.subarray(start));
}
