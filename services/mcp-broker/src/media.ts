import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import mime from 'mime-types';
import { errorMessage } from '@agentloop/core';
import { sanitizeFileName, type WorkspaceManager } from '@agentloop/workspace';

/** Folder of the thread's workspace that binary MCP content is saved to (README "MCP calls"). */
export const MCP_OUTPUTS_DIR = 'outputs/mcp';
/** Files of one `<server>-<tool>` stem kept side by side before saving gives up. */
const MAX_SAME_NAME = 1_000;

/** What became of one binary part of a result (image, audio, blob resource). */
export type SavedMedia = { path: string; bytes: number } | { error: string; bytes: number };

/** Where a call's binary parts go: the calling thread's workspace, or nowhere (no thread, no workspace root). */
export interface MediaTarget {
  workspaces: WorkspaceManager;
  tenantId: string;
  threadId: string;
  /** Largest part saved, in decoded bytes; bigger ones are reported, not written. */
  maxBytes: number;
}

/** A file extension for a MIME type (`image/png` → `png`), `bin` when unknown. */
export function extensionOf(mimeType: string | undefined): string {
  return (mimeType && mime.extension(mimeType)) || 'bin';
}

/**
 * Saves `base64` as `outputs/mcp/<stem>.<ext>` in the thread's workspace (created if need be),
 * through the workspace's own path rules (containment, writable folders, symlinks). A part over
 * `maxBytes`, or one that cannot be written, is reported instead — the call itself still succeeds.
 */
export async function saveMedia(target: MediaTarget, stem: string, mimeType: string | undefined, base64: string): Promise<SavedMedia> {
  // Decoded size without decoding: a too-big part is refused before it takes memory twice.
  const clean = base64.replace(/\s+/g, '');
  const bytes = Math.max(0, Math.floor((clean.length * 3) / 4) - (clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0));
  if (bytes > target.maxBytes) return { error: `not saved: larger than the ${target.maxBytes}-byte limit (MCP_MAX_MEDIA_BYTES)`, bytes };
  const data = Buffer.from(clean, 'base64');
  try {
    const ws = await target.workspaces.ensure(target.tenantId, target.threadId);
    // `<stem>-<n>`: the first free n, claimed with O_EXCL so parallel calls never overwrite each other.
    for (let n = 1; n <= MAX_SAME_NAME; n++) {
      const name = sanitizeFileName(`${stem}-${n}.${extensionOf(mimeType)}`);
      const resolved = await ws.resolve(`${MCP_OUTPUTS_DIR}/${name}`, { access: 'write' });
      if (resolved.exists) continue;
      await mkdir(path.dirname(resolved.real), { recursive: true });
      try {
        await writeFile(resolved.real, data, { flag: 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      return { path: resolved.relative, bytes };
    }
    return { error: `not saved: ${MAX_SAME_NAME} files named ${stem}-<n> exist already in ${MCP_OUTPUTS_DIR}`, bytes };
  } catch (err) {
    return { error: `not saved: ${errorMessage(err)}`, bytes };
  }
}

type Part = Record<string, unknown>;

/**
 * Saves every image and audio part of a CallToolResult, and every embedded blob resource, as
 * `outputs/mcp/<server>-<tool>-<n>.<ext>`; the map (by index in `content`) is what formatResult
 * names in the model's text.
 */
export async function saveResultMedia(content: unknown, target: MediaTarget, server: string, tool: string): Promise<Map<number, SavedMedia>> {
  const saved = new Map<number, SavedMedia>();
  if (!Array.isArray(content)) return saved;
  const stem = `${server}-${tool}`;
  for (const [i, c] of (content as unknown[]).entries()) {
    if (!c || typeof c !== 'object') continue;
    const p = c as Part;
    if ((p.type === 'image' || p.type === 'audio') && typeof p.data === 'string') {
      saved.set(i, await saveMedia(target, stem, typeof p.mimeType === 'string' ? p.mimeType : undefined, p.data));
    } else if (p.type === 'resource' && p.resource && typeof p.resource === 'object' && typeof (p.resource as Part).blob === 'string') {
      const r = p.resource as Part;
      saved.set(i, await saveMedia(target, stem, typeof r.mimeType === 'string' ? r.mimeType : undefined, r.blob as string));
    }
  }
  return saved;
}
