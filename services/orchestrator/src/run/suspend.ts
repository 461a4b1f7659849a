/**
 * A run whose graph is suspended on delegated agents: start them and end this job, so the run
 * holds no worker slot while they work. The run stays `running` (thread `busy`); the last child
 * to finish enqueues its resume (delegation.ts).
 */
import type { Logger } from '@agentloop/core';
import type { RunEventStream } from '@agentloop/bus';
import type { RunJob } from '@agentloop/proto';
import type { DelegationCoordinator, DelegationRequest } from '../delegation.js';

/** A failure here fails the job, and its retry re-raises the interrupt. */
export async function suspendRun(
  delegation: Pick<DelegationCoordinator, 'start'> | undefined,
  events: Pick<RunEventStream, 'publish'>,
  job: RunJob,
  request: DelegationRequest,
  depth: number,
  log: Logger,
): Promise<void> {
  if (!delegation) throw new Error('internal: the graph delegated but no runs queue is configured');
  await delegation.start(job, request, depth);
  await events.publish(job.runId, job.threadId, 'updates', {
    delegate: {
      status: 'waiting_children',
      delegation_id: request.delegation_id,
      children: request.children.map((c) => ({ run_id: c.run_id, thread_id: c.thread_id, tool_call_id: c.tool_call_id, task: c.task })),
    },
  });
  log.info({ delegation_id: request.delegation_id, children: request.children.map((c) => c.run_id) }, 'run suspended while delegated agents run');
}
