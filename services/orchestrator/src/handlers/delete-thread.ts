import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { Headers, type RequestHandler } from '@agentloop/bus';
import { AgentLoopError, InvalidArgumentError, type Logger } from '@agentloop/core';
import { create, fromBinary, toBinary, WorkspaceRequest_Action, WorkspaceRequestSchema, WorkspaceResponseSchema } from '@agentloop/proto';
import { checkpointThreadId } from '../run-executor.js';
import type { ToolClient } from '../tool-client.js';

/**
 * `agentloop.orchestrator.threads.delete`: removes what a thread leaves outside the record store —
 * its checkpoints (namespaced `<tenant>:<thread>`) and its workspace (asked of the tool-runner).
 * The gateway calls it when a thread is deleted, before it deletes the thread's records. Idempotent.
 */
export function deleteThreadHandler(deps: { checkpointer: BaseCheckpointSaver; tools: Pick<ToolClient, 'deleteWorkspace'>; logger: Logger }): RequestHandler {
  return async (msg) => {
    const req = fromBinary(WorkspaceRequestSchema, msg.data);
    if (!req.tenantId || !req.threadId || req.action !== WorkspaceRequest_Action.DELETE) {
      throw new InvalidArgumentError('A thread deletion needs tenant_id, thread_id and action ACTION_DELETE');
    }
    const caller = msg.headers[Headers.tenant];
    if (caller && caller !== req.tenantId) throw new AgentLoopError('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
    await deps.checkpointer.deleteThread(checkpointThreadId(req.tenantId, req.threadId));
    await deps.tools.deleteWorkspace(req.tenantId, req.threadId);
    deps.logger.info({ tenant: req.tenantId, thread_id: req.threadId }, 'thread checkpoints and workspace deleted');
    return toBinary(WorkspaceResponseSchema, create(WorkspaceResponseSchema, {}));
  };
}
