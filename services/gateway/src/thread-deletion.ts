import { UnavailableError } from '@agentloop/core';
import { Headers, ORCHESTRATOR_SUBJECTS, type Bus } from '@agentloop/bus';
import { create, fromBinary, toBinary, WorkspaceRequest_Action, WorkspaceRequestSchema, WorkspaceResponseSchema } from '@agentloop/proto';
import type { Store } from '@agentloop/store';

/**
 * The store, except that `deleteThread` first asks an orchestrator (over the bus) to delete the
 * thread's checkpoints and workspace: the gateway cannot load LangGraph or reach the workspace
 * volume. When no orchestrator answers, the deletion fails (503) and the records stay, so a retry
 * deletes everything rather than leaving orphaned checkpoints.
 */
export function withThreadResourceDeletion(store: Store, bus: Bus): Store {
  const deleteThread = async (tenantId: string, threadId: string): Promise<boolean> => {
    const req = create(WorkspaceRequestSchema, { tenantId, threadId, action: WorkspaceRequest_Action.DELETE });
    const reply = await bus.request(ORCHESTRATOR_SUBJECTS.deleteThread, toBinary(WorkspaceRequestSchema, req), {
      timeoutMs: 30_000,
      headers: { [Headers.tenant]: tenantId },
    });
    const res = fromBinary(WorkspaceResponseSchema, reply.data);
    if (res.error) throw new UnavailableError(`Could not delete the checkpoints and workspace of thread ${threadId}: ${res.error.message}`);
    return store.deleteThread(tenantId, threadId);
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'deleteThread') return deleteThread;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
