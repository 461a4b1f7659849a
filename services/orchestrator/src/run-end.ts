import { create, runStatusFromName, toBinary, WebhookJobSchema, type RunJob } from '@agentloop/proto';
import type { RunEventStream } from '@agentloop/bus';
import type { JobQueue } from '@agentloop/queue';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { LifecycleEvent, RunLifecycle } from '@agentloop/store';
import type { Logger } from '@agentloop/core';
import type { ToolClient } from './tool-client.js';
import type { DelegationCoordinator } from './delegation.js';

/**
 * What follows a run's recorded end, as subscribers of the lifecycle's `run.ended` event: the
 * `end` event, the webhook, the cleanup of a stateless run, the notice to a delegation parent.
 * Each is safe to repeat (a replayed end: the webhook job id dedupes the delivery, the parent's
 * ledger entry keeps its first answer).
 */

/** What the executor passes along with a run's end transition. */
export interface EndContext {
  job: RunJob;
  /** The run's model (webhook payload), when its config resolved. */
  model: { provider: string; label: string } | null;
}

type Ended = Extract<LifecycleEvent<EndContext>, { type: 'run.ended' }>;

export interface RunEndDeps {
  events: RunEventStream;
  webhooks: Pick<JobQueue, 'enqueue'>;
  checkpointer: Pick<BaseCheckpointSaver, 'deleteThread'>;
  tools: Pick<ToolClient, 'deleteWorkspace'>;
  delegation: Pick<DelegationCoordinator, 'childFinished'> | undefined;
  logger: Logger;
  webhookAttempts: number;
  webhookBackoffMs: number;
  /** Checkpoint thread id of a run's thread. */
  checkpointThreadId: (tenantId: string, threadId: string) => string;
}

/** The webhook body of a finished run. */
export function webhookPayload(e: Ended, job: RunJob, model: EndContext['model']): Record<string, unknown> {
  return {
    run_id: job.runId,
    thread_id: job.threadId,
    assistant_id: job.assistantId,
    status: e.run.status,
    created_at: e.run.createdAt.toISOString(),
    updated_at: e.run.updatedAt.toISOString(),
    metadata: e.run.metadata,
    model,
    values: e.values ?? {},
    ...(e.error ? { error: e.error.message, error_type: e.error.error } : {}),
    webhook_sent_at: new Date().toISOString(),
  };
}

/** Subscribes the end announcements to the lifecycle, in their order. */
export function announceRunEnds(lifecycle: RunLifecycle<EndContext>, deps: RunEndDeps): void {
  lifecycle.on('run.ended', async (e) => {
    await deps.events.publish(e.run.runId, e.run.threadId, 'end', null);
    deps.logger.info(
      { run_id: e.run.runId, thread_id: e.run.threadId, tenant: e.run.tenantId, status: e.run.status, cause: e.cause, model: e.ctx?.model?.label },
      'run finished',
    );
  });
  lifecycle.on('run.ended', async (e) => {
    const job = e.ctx?.job;
    if (!job?.webhookUrl) return;
    const hook = create(WebhookJobSchema, {
      deliveryId: job.runId,
      url: job.webhookUrl,
      runId: job.runId,
      threadId: job.threadId,
      tenantId: job.tenantId,
      status: runStatusFromName(e.run.status),
      payloadJson: JSON.stringify(webhookPayload(e, job, e.ctx?.model ?? null)),
    });
    await deps.webhooks.enqueue(toBinary(WebhookJobSchema, hook), { jobId: job.runId, attempts: deps.webhookAttempts, backoffMs: deps.webhookBackoffMs });
  });
  lifecycle.on('run.ended', async (e) => {
    const job = e.ctx?.job;
    if (!job?.ephemeral) return;
    await deps.checkpointer.deleteThread(deps.checkpointThreadId(job.tenantId, job.threadId));
    // Never a workspace this run only borrowed.
    if (!job.workspaceThreadId || job.workspaceThreadId === job.threadId) await deps.tools.deleteWorkspace(job.tenantId, job.threadId).catch(() => undefined);
  });
  lifecycle.on('run.ended', async (e) => {
    const job = e.ctx?.job;
    if (job?.delegation) await deps.delegation?.childFinished(job);
  });
}
