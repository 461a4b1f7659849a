/**
 * Fakes for testing the parts of a run's execution alone (run/*.test.ts): a job, a run record,
 * an event stream that records, a lifecycle that records, a graph state. Not used by production code.
 */
import { create, RunJobSchema, type RunJob } from '@agentloop/proto';
import { silentLogger } from '@agentloop/core';
import type { EndRequest, EndResult, JsonObject, RunErrorInfo, RunRecord } from '@agentloop/store';
import { DELEGATION_INTERRUPT, type DelegationRequest } from '../delegation.js';
import type { EndContext } from '../run-end.js';

export const log = silentLogger();

export function fakeJob(over: Omit<Partial<RunJob>, '$typeName' | '$unknown'> = {}): RunJob {
  return create(RunJobSchema, { runId: 'r1', threadId: 'th1', tenantId: 't1', assistantId: 'agent', ...over });
}

export function fakeRun(over: Partial<RunRecord> = {}): RunRecord {
  const at = new Date(0);
  return {
    runId: 'r1',
    threadId: 'th1',
    tenantId: 't1',
    assistantId: 'agent',
    status: 'running',
    createdAt: at,
    updatedAt: at,
    startedAt: at,
    endedAt: null,
    attempts: 0,
    error: null,
    metadata: {},
    kwargs: {},
    multitaskStrategy: 'reject',
    deferred: false,
    deadLetter: null,
    redrives: 0,
    ...over,
  };
}

/** An event stream that records what is published. */
export function recordingEvents() {
  const published: Array<{ event: string; data: unknown }> = [];
  return {
    published,
    async publish(_runId: string, _threadId: string, event: string, data: unknown): Promise<number> {
      published.push({ event, data });
      return published.length;
    },
  };
}

/** A lifecycle whose `end` answers `endResult` and which records every call. */
export function recordingLifecycle(
  endResult: (req: EndRequest) => EndResult = (req) => ({ kind: 'ended', run: fakeRun({ status: req.status }), threadStatus: undefined, promoted: undefined }),
) {
  const calls: Array<{ op: string; args: unknown[] }> = [];
  return {
    calls,
    async end(req: EndRequest, ctx?: EndContext): Promise<EndResult> {
      calls.push({ op: 'end', args: [req, ctx] });
      return endResult(req);
    },
    async replayEnd(run: RunRecord, ctx: EndContext | undefined, values: JsonObject | null, error?: RunErrorInfo): Promise<void> {
      calls.push({ op: 'replayEnd', args: [run, ctx, values, error] });
    },
  };
}

export function delegationRequest(id = 'd1'): DelegationRequest {
  return { type: DELEGATION_INTERRUPT, delegation_id: id, children: [] };
}

/** A graph state as `getState` returns it, reduced to what the run parts read. */
export function stateWith(values: JsonObject, opts: { next?: string[]; interrupts?: unknown[] } = {}) {
  return { values, next: opts.next ?? [], tasks: [{ interrupts: (opts.interrupts ?? []).map((value, i) => ({ id: `i${i}`, value })) }] };
}
