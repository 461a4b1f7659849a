import type { MethodImpl, ServiceShape } from '@agentloop/bus';
import { AgentLoopError, type Logger } from '@agentloop/core';
import { create, WorkspaceRequest_Action, WorkspaceResponseSchema, type ToolRunner, type WorkspaceResponse } from '@agentloop/proto';
import {
  filesChangedSinceRunStart,
  listWorkspaceFiles,
  forgetRunStartWithoutWorkspace,
  noteRunStartWithoutWorkspace,
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
 * its top level) — at a run's start (`run_id` set) only when it is there
 * already —, DELETE removes it, LIST reports the regular files of some of its
 * folders (a run's artifacts; a missing workspace has none), INSPECT tells
 * where a write of a path would land (and the end of the file there) without
 * creating anything. Failures are
 * replied in `error` (TOOL_RUNNER_RPC), their messages redacted of host paths by the server.
 */
export function manageWorkspace(workspaces: WorkspaceManager, logger: Logger): MethodImpl<ServiceShape<typeof ToolRunner>, 'workspace'> {
  return async (req, ctx) => {
    let res: WorkspaceResponse;
    // Built when something is logged: a run's ENSURE and LIST usually log nothing (issue 9).
    const log = () => logger.child({ tenant: req.tenantId, thread_id: req.threadId });
    // The workspace is the body's tenant's: a caller that names itself must name that one.
    if (ctx.callerTenant && req.tenantId !== ctx.callerTenant) {
      log().warn({ header_tenant: ctx.callerTenant }, 'tenant header and workspace request disagree');
      throw new AgentLoopError('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
    }
    switch (req.action) {
      case WorkspaceRequest_Action.ENSURE: {
        if (req.runId !== '') {
          validateWorkspaceId('run_id', req.runId);
          // A run's start does not create its workspace: most runs never touch it (issue 9). The
          // first tool, sandbox, upload or skill that needs it creates it, and this note says the
          // run started with nothing there (see noteRunStartWithoutWorkspace).
          const probed = await workspaces.probe(req.tenantId, req.threadId);
          if (!probed.exists) {
            noteRunStartWithoutWorkspace(probed.root, req.runId);
            res = create(WorkspaceResponseSchema, { entries: [] });
            break;
          }
        }
        const { workspace: ws, created } = await workspaces.ensureCreated(req.tenantId, req.threadId);
        if (req.runId !== '' && (await recordRunStart(ws, req.runId, ARTIFACT_DIRS, { emptyWorkspace: created }))) {
          if (logger.isLevelEnabled('debug')) log().debug({ run_id: req.runId }, 'run start recorded');
        }
        res = create(WorkspaceResponseSchema, { entries: await workspaces.entries(ws) });
        break;
      }
      case WorkspaceRequest_Action.DELETE: {
        const existed = await workspaces.delete(req.tenantId, req.threadId);
        log().info({ existed }, 'workspace delete');
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
        const maxFiles = req.maxFiles > 0 ? Math.min(req.maxFiles, 10_000) : 1000;
        if (req.runId !== '') validateWorkspaceId('run_id', req.runId);
        // A workspace that is not there holds no files, new or old: nothing to create or walk.
        const probed = await workspaces.probe(req.tenantId, req.threadId);
        if (!probed.exists) {
          if (req.runId !== '') forgetRunStartWithoutWorkspace(probed.root, req.runId);
          res = create(WorkspaceResponseSchema, { comparedToStart: req.runId !== '', truncated: false, files: [] });
          break;
        }
        const ws = await workspaces.ensure(req.tenantId, req.threadId);
        const sinceStart = req.runId !== '' ? await filesChangedSinceRunStart(ws, req.runId, folders, { maxFiles }) : undefined;
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
    return res;
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
