import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { newId, newOrderedId } from '@agentloop/core';
import type { UploadRecord } from '@agentloop/store';
import {
  checkPathLimits,
  detectFileType,
  listWorkspaceFiles,
  sanitizeFileName,
  shownPathHead,
  WorkspaceError,
  errnoCode,
  type Workspace,
} from '@agentloop/workspace';
import type { RouteContext } from '../context.js';
import { ApiError, invalid, notFound } from '../errors.js';
import { parseRequest, ThreadParams } from '../validation.js';
import { requireThread } from './threads.js';

/** Folders clients may list and download from; the rest of a workspace stays private. */
export const DOWNLOADABLE_DIRS = ['uploads', 'outputs'] as const;

/** Download URL of a workspace file (absolute when PUBLIC_BASE_URL is set). */
export function fileUrl(baseUrl: string | undefined, threadId: string, relPath: string): string {
  const encoded = relPath.split('/').map(encodeURIComponent).join('/');
  return `${baseUrl ?? ''}/threads/${encodeURIComponent(threadId)}/files/${encoded}`;
}

/** An uploaded file as the API reports it. */
export function toApiUpload(u: UploadRecord, baseUrl: string | undefined): Record<string, unknown> {
  return {
    upload_id: u.uploadId,
    name: u.name,
    original_name: u.originalName,
    path: u.path,
    type: u.type,
    mime: u.mime,
    size: u.size,
    ...(u.mismatch ? { warning: u.mismatch } : {}),
    url: fileUrl(baseUrl, u.threadId, u.path),
    created_at: u.createdAt.toISOString(),
  };
}

const tooLarge = (message: string) => new ApiError('TOO_LARGE', message);

interface ReceivedFile {
  temp: string;
  name: string;
  originalName: string;
}

/**
 * Thread files (seed 001 Part 3):
 * - `POST /threads/{id}/files` (multipart/form-data, one or more file parts):
 *   streamed to disk, all-or-nothing — a request over UPLOAD_MAX_FILE_BYTES or
 *   UPLOAD_MAX_FILES gets 413 and leaves no file behind. Names are sanitized;
 *   kinds are detected from extension and content; the files are announced in
 *   the thread's next run (see RunService).
 * - `GET /threads/{id}/files`: files under uploads/ and outputs/.
 * - `GET /threads/{id}/files/{path}`: one of them, as an attachment.
 */
export async function registerFileRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  const { config } = ctx;
  // The multipart plugin only where uploads are received (an encapsulated context): registered on
  // the whole API, its hooks added a 'close' listener and a cleanup to every request (issue 9).
  await app.register(async (uploads) => {
    await uploads.register(multipart, {
      throwFileSizeLimit: false,
      limits: {
        fileSize: config.UPLOAD_MAX_FILE_BYTES,
        files: config.UPLOAD_MAX_FILES,
        fields: 20,
        fieldSize: 64 * 1024,
        parts: config.UPLOAD_MAX_FILES + 20,
        headerPairs: 100,
      },
    });

    uploads.post('/threads/:thread_id/files', async (request, reply) => {
      const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
      await requireThread(ctx, request.tenantId, thread_id);
      if (!request.isMultipart()) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Upload files as multipart/form-data (one "file" part per file), e.g. curl -F file=@report.pdf');
      }
      const ws = await ctx.workspaces.ensure(request.tenantId, thread_id);
      const uploadsDir = (await ws.resolve('uploads', { access: 'read', mustExist: true })).real;
      const received: ReceivedFile[] = [];
      const log = request.log.child({ thread_id, tenant: request.tenantId });
      try {
        try {
          for await (const part of request.parts()) {
            if (part.type !== 'file') continue;
            const originalName = part.filename ?? '';
            const temp = path.join(uploadsDir, `.upload-${newId()}.part`);
            received.push({ temp, name: sanitizeFileName(originalName), originalName });
            // O_EXCL + O_NOFOLLOW: the temp name is new and never a planted link.
            const out = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o640);
            await pipeline(part.file, out.createWriteStream());
            if (part.file.truncated) {
              throw tooLarge(
                `File "${originalName}" is larger than the upload limit of ${config.UPLOAD_MAX_FILE_BYTES} bytes (UPLOAD_MAX_FILE_BYTES); nothing was stored.`,
              );
            }
          }
        } catch (err) {
          throw mapMultipartError(err, config.UPLOAD_MAX_FILES);
        }
        if (received.length === 0) throw invalid('body.file', 'no file part in the request; send each file as a multipart file part');

        // Every file arrived: move them into place and record them.
        const names = uniqueNames(received.map((r) => r.name));
        const out: UploadRecord[] = [];
        for (const [i, file] of received.entries()) {
          const name = names[i] ?? file.name;
          const target = await ws.resolve(`uploads/${name}`, { access: 'write' });
          if (path.dirname(target.real) !== uploadsDir) throw new ApiError('CONFLICT', `uploads/${name} is not a plain file name in uploads/`);
          const st = await fs.lstat(target.real).catch(() => undefined);
          if (st?.isDirectory()) throw new ApiError('CONFLICT', `uploads/${name} is a folder; rename the file and upload it again`);
          // rename() replaces a previous file of that name (or a link) without following it.
          await fs.rename(file.temp, target.real);
          const size = (await fs.stat(target.real)).size;
          const kind = await detectFileType(target.real, name);
          const record = await ctx.store.addUpload({
            tenantId: request.tenantId,
            threadId: thread_id,
            uploadId: newOrderedId(),
            path: `uploads/${name}`,
            name,
            originalName: file.originalName,
            type: kind.type,
            mime: kind.mime,
            size,
            mismatch: kind.mismatch ?? null,
          });
          out.push(record);
          log.info({ file: record.path, size, type: kind.type, mismatch: kind.mismatch }, 'file uploaded');
        }
        return reply.code(201).send({ files: out.map((u) => toApiUpload(u, config.PUBLIC_BASE_URL)) });
      } catch (err) {
        // The client may still be sending: answer and close, never keep reading a refused body.
        if (err instanceof ApiError && err.statusCode === 413) void reply.header('connection', 'close');
        throw err;
      } finally {
        await Promise.all(received.map((r) => fs.rm(r.temp, { force: true }).catch(() => undefined)));
      }
    });
  });

  app.get('/threads/:thread_id/files', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    await requireThread(ctx, request.tenantId, thread_id);
    const ws = await ctx.workspaces.ensure(request.tenantId, thread_id);
    const listing = await listWorkspaceFiles(ws.root, DOWNLOADABLE_DIRS);
    return {
      files: listing.files.map((f) => ({
        path: f.path,
        name: f.name,
        size: f.size,
        type: f.type,
        modified_at: new Date(f.modifiedMs).toISOString(),
        url: fileUrl(config.PUBLIC_BASE_URL, thread_id, f.path),
      })),
      truncated: listing.truncated,
    };
  });

  app.get('/threads/:thread_id/files/*', async (request, reply) => {
    const { thread_id } = parseRequest(ThreadParams, { thread_id: (request.params as { thread_id: unknown }).thread_id }, 'params');
    const rel = (request.params as { '*': string })['*'] ?? '';
    await requireThread(ctx, request.tenantId, thread_id);
    const ws = await ctx.workspaces.ensure(request.tenantId, thread_id);
    return sendWorkspaceFile(ws, rel, request, reply);
  });
}

async function sendWorkspaceFile(ws: Workspace, rel: string, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  // Length, name lengths and depth first (422 naming the limit), before anything else looks at the path.
  checkPathLimits(rel);
  // Every message echoes at most the head of the path, control characters escaped.
  const shown = shownPathHead(rel);
  const segments = rel.split('/');
  const top = segments[0] ?? '';
  if (!(DOWNLOADABLE_DIRS as readonly string[]).includes(top) || segments.length < 2) {
    throw notFound(`Not found: ${shown}. Only files under ${DOWNLOADABLE_DIRS.map((d) => `${d}/`).join(' and ')} can be downloaded.`);
  }
  // Lexical and real containment (symlinks resolved) in the workspace, and still under the same folder.
  const resolved = await ws.resolve(rel, { access: 'read', mustExist: true }).catch((err: unknown) => {
    throw err instanceof WorkspaceError && err.code === 'NOT_FOUND' ? notFound(`File not found: ${shown}`) : err;
  });
  const realTop = path.relative(ws.root, resolved.real).split(path.sep)[0];
  if (realTop !== top || resolved.relative.split('/').some((s) => s.startsWith('.'))) throw notFound(`File not found: ${shown}`);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(resolved.real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ELOOP') throw notFound(`File not found: ${shown}`);
    throw err;
  }
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    throw notFound(`Not a file: ${shown}`);
  }
  const kind = await detectFileType(resolved.real);
  const name = path.basename(resolved.real);
  void reply
    .header('content-type', kind.mime)
    .header('content-length', String(st.size))
    // Always a download: an HTML or SVG upload must not run as a page of this origin.
    .header('content-disposition', `attachment; filename="${asciiFallback(name)}"; filename*=UTF-8''${encodeURIComponent(name)}`)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'private, no-cache')
    .header('last-modified', st.mtime.toUTCString());
  if (request.method === 'HEAD') {
    await handle.close();
    return reply.send();
  }
  return reply.send(handle.createReadStream({ autoClose: true }));
}

function asciiFallback(name: string): string {
  return name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
}

/** Names made unique within one request: "a.pdf", "a (2).pdf", ... */
function uniqueNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return names.map((name) => {
    let candidate = name;
    const ext = path.extname(name);
    const stem = name.slice(0, name.length - ext.length);
    for (let n = 2; seen.has(candidate.toLowerCase()); n++) candidate = `${stem} (${n})${ext}`;
    seen.add(candidate.toLowerCase());
    return candidate;
  });
}

function mapMultipartError(err: unknown, maxFiles: number): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'FST_FILES_LIMIT':
      return tooLarge(`Too many files: at most ${maxFiles} per request (UPLOAD_MAX_FILES); nothing was stored.`);
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return tooLarge('Too many form parts in the request; nothing was stored.');
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge('A file is larger than the upload limit (UPLOAD_MAX_FILE_BYTES); nothing was stored.');
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new ApiError('MALFORMED_REQUEST', `Malformed multipart request: ${(err as Error).message}`);
    default:
      break;
  }
  switch (errnoCode(err)) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new ApiError('STORAGE_FULL', 'No space left to store the upload; nothing was stored.');
    default:
      break;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (/multipart|boundary|terminated early|Unexpected end/i.test(message)) {
    return new ApiError('MALFORMED_REQUEST', `Malformed multipart request: ${message}`);
  }
  return err;
}
