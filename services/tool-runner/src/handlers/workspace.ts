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
import type { WorkspaceManager } from '@agentloop/workspace';

/**
 * `agentloop.tools.workspace`: ENSURE creates the thread's workspace (and lists
 * its top level), DELETE removes it. Failures are replied in `error`.
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
          res = create(WorkspaceResponseSchema, { entries: await workspaces.entries(ws) });
          break;
        }
        case WorkspaceRequest_Action.DELETE: {
          const existed = await workspaces.delete(req.tenantId, req.threadId);
          log.info({ existed }, 'workspace delete');
          res = create(WorkspaceResponseSchema, { entries: [] });
          break;
        }
        default:
          throw new AgentLoopError('INVALID_ARGUMENT', `WorkspaceRequest.action must be ENSURE or DELETE, got ${String(req.action)}`);
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
