import { constants, promises as fs, type promises } from 'node:fs';
import path from 'node:path';
import { mapFsError } from '@agentloop/workspace';
import { ToolError, WorkspacePermissionError } from '../errors.js';
import type { ToolContext } from '../registry.js';
import type { ProviderEndpoint } from './provider-request.js';

/** An OpenAI-compatible audio endpoint (TTS_* or STT_* variables). */
export interface AudioEndpoint extends ProviderEndpoint {
  /** Base URL including the version, e.g. https://api.openai.com/v1 (no trailing slash). */
  baseUrl: string;
  model: string;
  apiKey?: string;
}

/** `{base}/audio/speech` or `{base}/audio/transcriptions`. */
export function audioUrl(endpoint: AudioEndpoint, suffix: string): URL {
  return new URL(`${endpoint.baseUrl.replace(/\/+$/, '')}/audio/${suffix}`);
}

export function authHeaders(endpoint: AudioEndpoint): Record<string, string> {
  return endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {};
}

const AUDIO_TYPES: Record<string, string> = {
  '.mp3': 'audio/mpeg',
  '.mpga': 'audio/mpeg',
  '.mpeg': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.m4a': 'audio/mp4',
  '.mp4': 'audio/mp4',
  '.ogg': 'audio/ogg',
  '.oga': 'audio/ogg',
  '.opus': 'audio/ogg',
  '.webm': 'audio/webm',
  '.flac': 'audio/flac',
  '.aac': 'audio/aac',
};

export function audioMimeType(fileName: string): string {
  return AUDIO_TYPES[path.extname(fileName).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Reads a workspace file of at most `maxBytes` (resolved and contained by the workspace library:
 * no path, `..` or symlink reaches outside the thread's workspace).
 */
export async function readWorkspaceFile(ctx: ToolContext, input: string, maxBytes: number): Promise<{ relative: string; data: Buffer }> {
  const target = await ctx.workspace.resolve(input, { access: 'read', mustExist: true, signal: ctx.signal });
  let fh: promises.FileHandle;
  try {
    // Already fully resolved: a link planted there since is refused; a FIFO does not block the open.
    fh = await fs.open(target.real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw mapFsError(err, target.relative);
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new ToolError('INVALID_ARGUMENT', `${target.relative} is a directory, not an audio file`);
    if (!st.isFile()) throw new ToolError('INVALID_ARGUMENT', `${target.relative} is not a regular file`);
    if (st.size === 0) throw new ToolError('INVALID_ARGUMENT', `${target.relative} is empty`);
    if (st.size > maxBytes) {
      throw new ToolError('INVALID_ARGUMENT', `${target.relative} is ${st.size} bytes; transcribe_audio accepts files up to ${maxBytes} bytes`);
    }
    return { relative: target.relative, data: await fh.readFile({ signal: ctx.signal }) };
  } catch (err) {
    throw mapFsError(err, target.relative);
  } finally {
    await fh.close();
  }
}

/** Writes bytes to a workspace path under outputs/ (replacing a file there), creating outputs/ if needed. */
export async function writeOutputFile(ctx: ToolContext, input: string, data: Buffer): Promise<string> {
  const target = await ctx.workspace.resolve(input, { access: 'write', signal: ctx.signal });
  if (!target.relative.startsWith('outputs/')) throw new ToolError('INVALID_ARGUMENT', `Audio is written under outputs/, not to ${target.relative}`);
  const parent = path.dirname(target.real);
  let fh: promises.FileHandle | undefined;
  try {
    await fs.mkdir(parent, { recursive: true });
    // The folder just created must still be where it was checked to be.
    if ((await fs.realpath(parent)) !== parent) throw new WorkspacePermissionError(`the folder of ${target.relative} changed while writing`);
    fh = await fs.open(target.real, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
    if (!(await fh.stat()).isFile()) throw new ToolError('INVALID_ARGUMENT', `${target.relative} is not a regular file`);
    await fh.writeFile(data, { signal: ctx.signal });
  } catch (err) {
    throw mapFsError(err, target.relative);
  } finally {
    await fh?.close();
  }
  return target.relative;
}
