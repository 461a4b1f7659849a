import { Headers, type RequestHandler } from '@agentloop/bus';
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
import {
  filesChangedSinceRunStart,
  listWorkspaceFiles,
  recordRunStart,
  validateWorkspaceId,
  MAX_INSPECT_TAIL_BYTES,
  WORKSPACE_DIRS,
  type WorkspaceManager,
} from '@agentloop/workspace';

/** Folders whose new files are a run's artifacts. */
const ARTIFACT_DIRS = ['outputs'];

/**
 * `agentloop.tools.workspace`: ENSURE creates the thread's workspace (and lists
 * its top level), DELETE removes it, LIST reports the regular files of some of
 * its folders (a run's artifacts), INSPECT tells where a write of a path would
 * land (and the end of the file there) without creating anything. Failures are
 * replied in `error`.
 */
export function workspaceHandler(workspaces: WorkspaceManager, logger: Logger): RequestHandler {
  return async (msg, ctx) => {
    let res: WorkspaceResponse;
    try {
      const req = fromBinary(WorkspaceRequestSchema, msg.data);
      const log = logger.child({ tenant: req.tenantId, thread_id: req.threadId });
      const headerTenant = msg.headers[Headers.tenant];
      if (headerTenant && req.tenantId !== headerTenant) {
        log.warn({ header_tenant: headerTenant }, 'tenant header and workspace request disagree');
        throw new AgentLoopError('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
      }
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
            (await listWorkspaceFiles(ws.root, folders, {
              ...(req.modifiedSinceMs > 0n ? { sinceMs: Number(req.modifiedSinceMs) } : {}),
              maxFiles,
              signal: ctx.signal,
            }));
          res = create(WorkspaceResponseSchema, {
            comparedToStart: sinceStart !== undefined,
            truncated: listing.truncated,
            files: listing.files.map((f) => ({ path: f.path, name: f.name, size: BigInt(f.size), modifiedMs: BigInt(f.modifiedMs), type: f.type })),
          });
          break;
        }
        case WorkspaceRequest_Action.INSPECT: {
          res = await inspect(workspaces, req.tenantId, req.threadId, req.path, req.tailBytes, ctx.signal);
          break;
        }
        default:
          throw new AgentLoopError('INVALID_ARGUMENT', `WorkspaceRequest.action must be ENSURE, DELETE, LIST or INSPECT, got ${String(req.action)}`);
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

/**
 * INSPECT: resolves `path` with the function write_file uses, without its
 * write rules, in the thread's workspace whether or not it exists yet (nothing
 * is created). A refused path (limits, outside the workspace, a link loop)
 * answers `error` with the refusal's code and message and an empty
 * `relative_path`: the approval side must treat that as "the write would fail".
 */
async function inspect(
  workspaces: WorkspaceManager,
  tenantId: string,
  threadId: string,
  input: string,
  tailBytes: number,
  signal: AbortSignal,
): Promise<WorkspaceResponse> {
  const { workspace } = await workspaces.locate(tenantId, threadId);
  const found = await workspace.inspect(input, { tailBytes: Math.min(tailBytes, MAX_INSPECT_TAIL_BYTES), signal });
  return create(WorkspaceResponseSchema, { relativePath: found.relative, exists: found.exists, tail: found.tail });
}
