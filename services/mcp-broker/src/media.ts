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

/** Decoded size of whitespace-free base64 without decoding it: a too-big part is refused before it takes memory twice. */
function decodedBytes(clean: string): number {
  return Math.max(0, Math.floor((clean.length * 3) / 4) - (clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0));
}

/**
 * Saves `base64` as `outputs/mcp/<stem>.<ext>` in the thread's workspace (created if need be),
 * through the workspace's own path rules (containment, writable folders, symlinks). A part over
 * `maxBytes`, or one that cannot be written, is reported instead — the call itself still succeeds.
 */
export async function saveMedia(target: MediaTarget, stem: string, mimeType: string | undefined, base64: string): Promise<SavedMedia> {
  const clean = base64.replace(/\s+/g, '');
  const bytes = decodedBytes(clean);
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

/** An image or audio part of a result, decoded, as the model may be shown it (ExecuteToolResponse.media). */
export interface MediaBlock {
  kind: 'image' | 'audio';
  mimeType: string;
  data: Uint8Array;
  /** Where it was saved in the thread's workspace; '' when it was not. */
  savedPath: string;
}

/** Limits on the media passed back with one result (README "Images and vision models"). */
export interface MediaLimits {
  /** Largest block, decoded bytes (MCP_MAX_MEDIA_BYTES). */
  maxBlockBytes: number;
  /** All blocks of one result together (MCP_MAX_RESULT_MEDIA_BYTES); 0 passes none. */
  maxTotalBytes: number;
}

/** `image` / `audio` for a media part: the part's type, or for an embedded blob resource its MIME type's. */
function mediaKind(p: Part): { kind: 'image' | 'audio'; mimeType: string; base64: string } | undefined {
  if ((p.type === 'image' || p.type === 'audio') && typeof p.data === 'string' && typeof p.mimeType === 'string') {
    return { kind: p.type, mimeType: p.mimeType, base64: p.data };
  }
  const r = p.type === 'resource' && p.resource && typeof p.resource === 'object' ? (p.resource as Part) : undefined;
  if (r && typeof r.blob === 'string' && typeof r.mimeType === 'string') {
    const top = r.mimeType.split('/')[0];
    if (top === 'image' || top === 'audio') return { kind: top, mimeType: r.mimeType, base64: r.blob };
  }
  return undefined;
}

/**
 * The result's images and audio (parts, and embedded blob resources of those types) in order,
 * decoded, for a model that can take them. A block over `maxBlockBytes` is left out, and so is
 * every block that would take the result past `maxTotalBytes` (the reply crosses the bus in one
 * message: NATS refuses payloads over its max_payload, 1 MiB by default). What is left out still
 * reaches the model as the text naming the saved file.
 */
export function resultMedia(
  content: unknown,
  saved: ReadonlyMap<number, SavedMedia> | undefined,
  limits: MediaLimits,
): { blocks: MediaBlock[]; omitted: number } {
  const blocks: MediaBlock[] = [];
  let omitted = 0;
  let total = 0;
  if (!Array.isArray(content)) return { blocks, omitted };
  for (const [i, c] of (content as unknown[]).entries()) {
    const media = c && typeof c === 'object' ? mediaKind(c as Part) : undefined;
    if (!media) continue;
    const clean = media.base64.replace(/\s+/g, '');
    const size = decodedBytes(clean);
    if (size === 0 || size > limits.maxBlockBytes || total + size > limits.maxTotalBytes) {
      omitted++;
      continue;
    }
    const data = Buffer.from(clean, 'base64');
    total += data.length;
    const s = saved?.get(i);
    blocks.push({ kind: media.kind, mimeType: media.mimeType, data: new Uint8Array(data), savedPath: s && 'path' in s ? s.path : '' });
  }
  return { blocks, omitted };
}
