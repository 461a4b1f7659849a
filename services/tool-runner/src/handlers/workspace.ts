import type { RequestHandler } from '@agentloop/bus';
import { AgentLoopError, errorMessage, type Logger } from '@agentloop/core';
import {
  create,
  fromBinary,
  toBinary,
  ErrorSchema,
  WorkspaceRequestSchema,
  WorkspaceRequest_Action,
  WorkspaceResponseSchema,
  type WorkspaceResponse,
} from '@agentloop/proto';
import { filesChangedSinceRunStart, listWorkspaceFiles, recordRunStart, validateWorkspaceId, WORKSPACE_DIRS, type WorkspaceManager } from '@agentloop/workspace';

/** Folders whose new files are a run's artifacts. */
const ARTIFACT_DIRS = ['outputs'];

/**
 * `agentloop.tools.workspace`: ENSURE creates the thread's workspace (and lists
 * its top level), DELETE removes it, LIST reports the regular files of some of
 * its folders (a run's artifacts). Failures are replied in `error`.
 */
export function workspaceHandler(workspaces: WorkspaceManager, logger: Logger): RequestHandler {
  return async (msg) => {
    let res: WorkspaceResponse;
    try {
      const req = fromBinary(WorkspaceRequestSchema, msg.data);
      const log = logger.child({ tenant: req.tenantId, thread_id: req.threadId });
      switch (req.action) {
        case WorkspaceRequest_Action.ENSURE: {
          const ws = await workspaces.ensure(req.tenantId, req.threadId);
          if (req.runId !== '') {
            validateWorkspaceId('run_id', req.runId);
            if (await recordRunStart(ws.root, req.runId, ARTIFACT_DIRS)) log.debug({ run_id: req.runId }, 'run start recorded');
          }
          res = create(WorkspaceResponseSchema, { entries: await workspaces.entries(ws) });
          break;
        }
        case WorkspaceRequest_Action.DELETE: {
          const existed = await workspaces.delete(req.tenantId, req.threadId);
          log.info({ existed }, 'workspace delete');
          res = create(WorkspaceResponseSchema, { entries: [] });
          break;
        }
        case WorkspaceRequest_Action.LIST: {
          const folders = req.folders.length > 0 ? req.folders : ['outputs'];
          for (const f of folders) {
            if (!(WORKSPACE_DIRS as readonly string[]).includes(f)) {
              throw new AgentLoopError('INVALID_ARGUMENT', `WorkspaceRequest.folders: "${f}" is not a workspace folder (${WORKSPACE_DIRS.join(', ')})`);
            }
          }
          const ws = await workspaces.ensure(req.tenantId, req.threadId);
          const maxFiles = req.maxFiles > 0 ? Math.min(req.maxFiles, 10_000) : 1000;
          if (req.runId !== '') validateWorkspaceId('run_id', req.runId);
          const sinceStart = req.runId !== '' ? await filesChangedSinceRunStart(ws.root, req.runId, folders, { maxFiles }) : undefined;
          const listing =
            sinceStart ??
            (await listWorkspaceFiles(ws.root, folders, { ...(req.modifiedSinceMs > 0n ? { sinceMs: Number(req.modifiedSinceMs) } : {}), maxFiles }));
          res = create(WorkspaceResponseSchema, {
            comparedToStart: sinceStart !== undefined,
            truncated: listing.truncated,
            files: listing.files.map((f) => ({ path: f.path, name: f.name, size: BigInt(f.size), modifiedMs: BigInt(f.modifiedMs), type: f.type })),
          });
          break;
        }
        default:
          throw new AgentLoopError('INVALID_ARGUMENT', `WorkspaceRequest.action must be ENSURE, DELETE or LIST, got ${String(req.action)}`);
      }
    } catch (err) {
      const message = workspaces.redact(errorMessage(err));
      const wire =
        err instanceof AgentLoopError
          ? create(ErrorSchema, { code: err.code, message, retryable: err.retryable })
          : create(ErrorSchema, { code: 'INTERNAL', message, retryable: false });
      if (wire.code === 'INTERNAL') logger.error({ err }, 'workspace request failed');
      else logger.warn({ code: wire.code }, `workspace request failed: ${message}`);
      res = create(WorkspaceResponseSchema, { error: wire });
    }
    return toBinary(WorkspaceResponseSchema, res);
  };
}
