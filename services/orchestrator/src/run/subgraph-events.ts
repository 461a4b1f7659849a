/**
 * Subgraph namespaces for delegated agents: with `stream_subgraphs`, the stream events of a run
 * started by delegate_task are also published on its parent's run (and on every ancestor's that
 * asked for them), named `<mode>|delegate:<tool call id>` as LangGraph names a subgraph's events
 * (`values|node:task id`; the outermost namespace first). A client streaming the parent so sees
 * the child's progress. Lifecycle events (`metadata`, `error`, `end`) stay the child's own.
 */
import type { Delegation, RunJob } from '@agentloop/proto';
import type { RunEventStream } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';

/** A run that also receives a delegated run's events, and the namespace they carry there. */
export interface SubgraphTarget {
  runId: string;
  threadId: string;
  namespace: string;
}

const NOT_STREAM_MODES = new Set(['metadata', 'error', 'end']);

/** The ancestors of a delegated run that stream its events, nearest first. */
export function subgraphTargets(job: Pick<RunJob, 'delegation'>): SubgraphTarget[] {
  const out: SubgraphTarget[] = [];
  let namespace = '';
  let current: Pick<RunJob, 'delegation'> | undefined = job;
  while (current?.delegation) {
    const d: Delegation = current.delegation;
    // The parent's job (as the child was started) says whether its creator asked for subgraph events.
    if (!d.parentJob?.streamSubgraphs) break;
    namespace = namespace ? `delegate:${d.toolCallId}|${namespace}` : `delegate:${d.toolCallId}`;
    out.push({ runId: d.parentRunId, threadId: d.parentThreadId, namespace });
    current = d.parentJob;
  }
  return out;
}

/**
 * The event stream a delegated run publishes on: its own run's events as before, and each stream
 * event copied to its streaming ancestors under their namespace. The copy is a view: when it
 * cannot be published (the parent's event log is full, the bus hiccups) the child's run goes on.
 */
export function withSubgraphEvents(
  events: Pick<RunEventStream, 'publish'>,
  job: Pick<RunJob, 'runId' | 'delegation'>,
  log: Logger,
): Pick<RunEventStream, 'publish'> {
  const targets = subgraphTargets(job);
  if (targets.length === 0) return events;
  return {
    async publish(runId, threadId, event, data) {
      const seq = await events.publish(runId, threadId, event, data);
      if (runId !== job.runId || NOT_STREAM_MODES.has(event)) return seq;
      for (const t of targets) {
        await events.publish(t.runId, t.threadId, `${event}|${t.namespace}`, data).catch((err: unknown) => {
          log.warn({ err: errorMessage(err), parent_run_id: t.runId, event }, 'subgraph event not copied to the parent run');
        });
      }
      return seq;
    },
  };
}
