/**
 * The end of a run that ran here: its artifacts join the final values, the last `values` and the
 * `error` are published, then one lifecycle `end` transition records it; the lifecycle's
 * `run.ended` subscribers (run-end.ts) announce it. When a cancel recorded the end first, the
 * recorded end is announced instead, so events, webhook and record agree.
 */
import { errorMessage, type Logger } from '@agentloop/core';
import type { RunEventStream } from '@agentloop/bus';
import type { RunJob } from '@agentloop/proto';
import type { JsonObject, RunLifecycle } from '@agentloop/store';
import type { ToolClient } from '../tool-client.js';
import type { ResolvedModel } from '../models/registry.js';
import type { EndContext } from '../run-end.js';
import type { RunEnd } from './outcome.js';

export interface FinishDeps {
  events: Pick<RunEventStream, 'publish'>;
  lifecycle: Pick<RunLifecycle<EndContext>, 'end' | 'replayEnd'>;
  tools: Pick<ToolClient, 'listFiles'>;
  /** PUBLIC_BASE_URL: artifact URLs are absolute when set, else paths. */
  publicBaseUrl?: string | undefined;
}

export async function finishRun(
  deps: FinishDeps,
  job: RunJob,
  end: Pick<RunEnd, 'status' | 'error' | 'waitsForHuman'>,
  values: JsonObject | null,
  resolved: Pick<ResolvedModel, 'provider' | 'label'> | undefined,
  startedAt: Date,
  log: Logger,
): Promise<void> {
  const { events, lifecycle } = deps;
  const { status, error, waitsForHuman } = end;
  if (values) {
    const artifacts = await listArtifacts(deps, job, startedAt, log);
    values = { ...values, artifacts };
    // The stream's last `values` predates the listing and the interrupt: clients following it see them too.
    if (artifacts.length > 0 || waitsForHuman) await events.publish(job.runId, job.threadId, 'values', values);
  }
  if (error) await events.publish(job.runId, job.threadId, 'error', error);
  // One transition: the record, the thread's values and status, the thread handed to its next
  // deferred run; the `run.ended` subscribers announce it (end event, webhook, cleanup, parent).
  const model = resolved ? { provider: resolved.provider, label: resolved.label } : null;
  const ended = await lifecycle.end({ tenantId: job.tenantId, runId: job.runId, status, error, values, waitsForHuman, cause: 'finished' }, { job, model });
  if (ended.kind === 'already_ended') {
    // The record ended first (a cancel): announce what it says, so events, webhook and record agree.
    if (ended.run.status !== status) log.info({ ran_to: status, recorded: ended.run.status }, 'run record ended first; announcing the recorded status');
    await lifecycle.replayEnd(ended.run, { job, model }, values, ended.run.status === status ? error : undefined);
  }
}

/**
 * The run's artifacts (seed 003 "The Output Pipeline"): files under outputs/ that are new or
 * changed since the run first started (the tool-runner compares with what it recorded then;
 * without that record, by modification time), with a download URL. Best effort: a tool-runner
 * that does not answer leaves the run without artifacts, never fails it.
 */
export async function listArtifacts(deps: Pick<FinishDeps, 'tools' | 'publicBaseUrl'>, job: RunJob, startedAt: Date, log: Logger): Promise<JsonObject[]> {
  const workspaceThread = job.workspaceThreadId || job.threadId;
  try {
    const { files, truncated } = await deps.tools.listFiles(job.tenantId, workspaceThread, {
      folders: ['outputs'],
      runId: job.runId,
      modifiedSinceMs: startedAt.getTime(),
      maxFiles: 200,
    });
    if (truncated) log.warn({ listed: files.length }, 'more than 200 artifacts; the rest are not reported');
    const base = deps.publicBaseUrl ?? '';
    return files.map((f) => ({
      name: f.name,
      path: f.path,
      size: f.size,
      type: f.type,
      modified_at: new Date(f.modifiedMs).toISOString(),
      url: `${base}/threads/${encodeURIComponent(workspaceThread)}/files/${f.path.split('/').map(encodeURIComponent).join('/')}`,
    }));
  } catch (err) {
    log.warn({ err: errorMessage(err) }, 'artifacts not listed');
    return [];
  }
}
