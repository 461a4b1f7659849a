import type { StoredRunEvent } from '@agentloop/bus';
import type { AuditEntry, RunRecord, Store, ToolEffect, WebhookAttempt } from '@agentloop/store';
import { threadApprovals, type PendingApproval } from './pending-approvals.js';
import { runUsageFromValues, toConsoleRun, type ConsoleRun } from './run-summary.js';

/** One thing that happened in a run, in time order. */
export interface TimelineEntry {
  at: string;
  kind: 'run' | 'model_call' | 'tool_call' | 'approval' | 'child_run' | 'webhook' | 'error';
  /** One line for a list: "model call #2: write_file", "write_file: 12 ms". */
  title: string;
  status?: string;
  duration_ms?: number;
  detail?: Record<string, unknown>;
}

export interface RunTimeline {
  run: ConsoleRun;
  entries: TimelineEntry[];
  /** Decisions the run waits for now (the inbox's items for this run). */
  pending_approvals: PendingApproval[];
  /** False when the run's event log is gone (older than its retention): model calls are then missing. */
  event_log_available: boolean;
}

/** Tool results and model text are cut to this many characters: the timeline is an overview. */
const PREVIEW_CHARS = 2_000;
/** A message content's text: text parts as they are, media parts (images, audio) as a short label, never their base64. */
export function contentText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return JSON.stringify(v);
  return v
    .map((part: unknown) => {
      if (typeof part === 'string') return part;
      const p = (part ?? {}) as { type?: unknown; text?: unknown; mimeType?: unknown; mime_type?: unknown };
      if (p.type === 'text' && typeof p.text === 'string') return p.text;
      const mime = typeof p.mimeType === 'string' ? p.mimeType : typeof p.mime_type === 'string' ? p.mime_type : undefined;
      return `[${typeof p.type === 'string' ? p.type : 'part'}${mime ? `: ${mime}` : ''}]`;
    })
    .join('\n');
}
const preview = (v: unknown): string => {
  const s = contentText(v);
  return s.length > PREVIEW_CHARS ? `${s.slice(0, PREVIEW_CHARS)}…` : s;
};
const iso = (ms: number) => new Date(ms).toISOString();

type Msg = {
  type?: string;
  content?: unknown;
  tool_calls?: Array<{ name?: string; args?: unknown; id?: string }>;
  usage_metadata?: unknown;
  response_metadata?: Record<string, unknown>;
};

/** Model calls: the agent node's updates in the event log (one AI message each). */
function modelCalls(events: readonly StoredRunEvent[]): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  for (const ev of events) {
    if (ev.event !== 'updates') continue;
    let data: Record<string, { messages?: Msg[] } | null>;
    try {
      data = JSON.parse(ev.dataJson) as typeof data;
    } catch {
      continue;
    }
    for (const m of data.agent?.messages ?? []) {
      if (m.type !== 'ai') continue;
      const calls = (m.tool_calls ?? []).map((c) => c.name ?? '?');
      out.push({
        at: iso(ev.tsMs),
        kind: 'model_call',
        title: `model call #${out.length + 1}${calls.length > 0 ? `: ${calls.join(', ')}` : ''}`,
        detail: {
          content: preview(m.content ?? ''),
          tool_calls: m.tool_calls ?? [],
          usage: m.usage_metadata ?? null,
          model: m.response_metadata?.model_name ?? m.response_metadata?.model ?? m.response_metadata?.model_provider ?? null,
        },
      });
    }
  }
  return out;
}

function errors(events: readonly StoredRunEvent[]): TimelineEntry[] {
  return events
    .filter((e) => e.event === 'error')
    .map((e) => ({ at: iso(e.tsMs), kind: 'error' as const, title: 'error', detail: { error: preview(e.dataJson) } }));
}

function toolCall(e: ToolEffect): TimelineEntry {
  const done = e.state === 'completed';
  return {
    at: e.createdAt.toISOString(),
    kind: 'tool_call',
    title: e.toolName,
    status: done ? (e.isError ? 'error' : 'ok') : 'running',
    ...(done ? { duration_ms: Math.max(0, e.updatedAt.getTime() - e.createdAt.getTime()) } : {}),
    detail: { tool_call_id: e.toolCallId, result: done ? preview(e.content ?? '') : null, executions: e.executions },
  };
}

function approval(a: AuditEntry): TimelineEntry {
  return {
    at: iso(a.createdAtMs),
    kind: 'approval',
    title: `${a.toolName}: ${a.decision}`,
    status: a.decision,
    detail: {
      tool_call_id: a.toolCallId,
      rule: a.rule,
      risk_level: a.riskLevel,
      reason: a.reason,
      decided_by: a.decidedBy,
      comment: a.comment,
      approver_key_id: a.approverKeyId,
    },
  };
}

function webhook(w: WebhookAttempt): TimelineEntry {
  return {
    at: w.at.toISOString(),
    kind: 'webhook',
    title: `webhook attempt ${w.attempt}: ${w.outcome}`,
    status: w.outcome,
    duration_ms: w.durationMs,
    detail: { status_code: w.statusCode, error: w.error },
  };
}

function lifecycle(run: RunRecord): TimelineEntry[] {
  const out: TimelineEntry[] = [{ at: run.createdAt.toISOString(), kind: 'run', title: 'created', status: 'pending' }];
  if (run.startedAt) out.push({ at: run.startedAt.toISOString(), kind: 'run', title: 'started', status: 'running' });
  if (run.endedAt)
    out.push({
      at: run.endedAt.toISOString(),
      kind: 'run',
      title: `ended: ${run.status}`,
      status: run.status,
      ...(run.error ? { detail: { error: run.error } } : {}),
    });
  if (run.deadLetter)
    out.push({ at: run.deadLetter.at.toISOString(), kind: 'run', title: 'dead-lettered', status: 'dead_letter', detail: { reason: run.deadLetter.reason } });
  return out;
}

/** The runs a run delegated to (their threads carry `metadata.parent_run_id`). */
async function children(store: Store, run: RunRecord): Promise<TimelineEntry[]> {
  const threads = await store.searchThreads(run.tenantId, { limit: 100, offset: 0, metadata: { parent_run_id: run.runId } });
  const runs = (await Promise.all(threads.map((t) => store.listRuns(run.tenantId, t.threadId, { limit: 20 })))).flat();
  return runs
    .filter((r) => r.metadata.parent_run_id === run.runId)
    .map((r) => ({
      at: r.createdAt.toISOString(),
      kind: 'child_run' as const,
      title: `child run ${r.runId}`,
      status: r.status,
      ...(r.endedAt ? { duration_ms: Math.max(0, r.endedAt.getTime() - (r.startedAt ?? r.createdAt).getTime()) } : {}),
      detail: { run_id: r.runId, thread_id: r.threadId },
    }));
}

/**
 * A run's timeline from what is already recorded: its lifecycle (the run record), model calls and
 * errors (its event log), tool calls with duration and result (the effect ledger), approval
 * decisions (the audit trail), child runs (threads with `parent_run_id`), webhook attempts (the
 * delivery log), and what it waits for now.
 */
export async function buildTimeline(store: Store, run: RunRecord, events: readonly StoredRunEvent[]): Promise<RunTimeline> {
  const t = run.tenantId;
  const [effects, audit, hooks, kids, thread, latest] = await Promise.all([
    store.listToolEffects(t, run.runId),
    store.listAuditEntries(t, { runId: run.runId, limit: 1000 }),
    store.listWebhookAttempts(t, run.runId),
    children(store, run),
    store.getThread(t, run.threadId),
    store.listRuns(t, run.threadId, { limit: 1 }),
  ]);
  const isLatest = latest[0]?.runId === run.runId;
  const lastValues = [...events].reverse().find((e) => e.event === 'values' && e.dataJson.includes('"token_usage"'));
  const usage = lastValues
    ? runUsageFromValues(JSON.parse(lastValues.dataJson) as Record<string, unknown>)
    : isLatest
      ? runUsageFromValues(thread?.values)
      : { tokens: null, model_calls: null };
  const entries = [
    ...lifecycle(run),
    ...modelCalls(events),
    ...errors(events),
    ...effects.map(toolCall),
    ...audit.map(approval),
    ...kids,
    ...hooks.map(webhook),
  ].sort((a, b) => a.at.localeCompare(b.at));
  return {
    run: toConsoleRun(run, usage),
    entries,
    pending_approvals: isLatest && thread ? threadApprovals(thread, run) : [],
    event_log_available: events.length > 0,
  };
}
