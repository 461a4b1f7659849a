/**
 * Request subjects served by the orchestrator (queue group `orchestrator`), for services that
 * must reach what it owns (checkpoints) without importing it.
 */
export const ORCHESTRATOR_SUBJECTS = {
  /**
   * Deletes a thread's checkpoints and its workspace (through the tool-runner). Request: proto
   * WorkspaceRequest {tenant_id, thread_id, action: ACTION_DELETE}; reply: WorkspaceResponse.
   */
  deleteThread: 'agentloop.orchestrator.threads.delete',
  /**
   * Broadcast (publish/subscribe, no queue group): proto CancelRun. The orchestrator executing the
   * run aborts it; the others ignore it. The run record is already `interrupted` when this is sent.
   */
  cancelRun: 'agentloop.orchestrator.runs.cancel',
} as const;
