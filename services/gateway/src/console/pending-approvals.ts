import type { Store, ThreadRecord } from '@agentloop/store';
import { pendingInterrupts } from '../serialize.js';

/** One decision a human owes a run: a tool call to approve or reject, or an `ask_human` question. */
export interface PendingApproval {
  /** `<thread_id>:<interrupt id or position>`: stable while the interrupt waits. */
  id: string;
  kind: 'tool_approval' | 'question' | 'mcp_elicitation';
  tenant_id: string;
  thread_id: string;
  /** The run that stopped for it; a resume (`POST /threads/{thread_id}/runs` with `command.resume`) continues it. */
  run_id: string | null;
  assistant_id: string | null;
  tool_call_id: string | null;
  /** tool_approval: the tool and its arguments, why it needs a human, the rule and risk, the allowed answers. */
  tool?: string;
  args?: unknown;
  reason?: string;
  risk_level?: string;
  rule?: string;
  review_config?: unknown;
  /** question: what the agent asks, with its context and default answer. */
  question?: string;
  context?: string;
  default?: string | null;
  /** mcp_elicitation: the MCP server asking, its message (`question`), the form's JSON Schema or the URL to open. */
  server?: string;
  requested_schema?: unknown;
  url?: string | null;
  /** When the run stopped (the thread's last change). */
  requested_at: string;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The interrupts a thread waits on, the first one first (they are asked in order: one resume answers the first). */
export function threadApprovals(thread: ThreadRecord, run: { runId: string; assistantId: string } | undefined): PendingApproval[] {
  if (thread.status !== 'interrupted') return [];
  return pendingInterrupts(thread.values).map((i, n) => {
    const v = (i.value && typeof i.value === 'object' ? i.value : {}) as Record<string, unknown>;
    const common = {
      id: `${thread.threadId}:${i.id ?? n}`,
      tenant_id: thread.tenantId,
      thread_id: thread.threadId,
      run_id: run?.runId ?? null,
      assistant_id: run?.assistantId ?? null,
      tool_call_id: text(v.tool_call_id) ?? null,
      requested_at: thread.updatedAt.toISOString(),
    };
    if (v.type === 'mcp_elicitation') {
      return {
        ...common,
        kind: 'mcp_elicitation' as const,
        tool: text(v.tool) ?? '',
        server: text(v.server) ?? '',
        question: text(v.message) ?? '',
        requested_schema: v.requested_schema ?? {},
        url: text(v.url) ?? null,
      };
    }
    if (v.type === 'user_input_request') {
      return { ...common, kind: 'question' as const, question: text(v.question) ?? '', context: text(v.context) ?? '', default: text(v.default) ?? null };
    }
    return {
      ...common,
      kind: 'tool_approval' as const,
      tool: text(v.tool) ?? '',
      args: v.args ?? {},
      reason: text(v.reason) ?? '',
      risk_level: text(v.risk_level) ?? '',
      rule: text(v.rule) ?? '',
      review_config: Array.isArray(v.review_configs) ? v.review_configs[0] : { allowed_decisions: v.options ?? ['approve', 'reject'] },
    };
  });
}

/**
 * Pending tool approvals and `ask_human` questions across threads: the interrupted threads'
 * `__interrupt__` values (what `GET /threads/{id}/state` reports), each with the run that stopped.
 * `tenantId` undefined: every tenant's (an operator key).
 */
export async function listPendingApprovals(store: Store, tenantId: string | undefined, limit: number): Promise<PendingApproval[]> {
  const threads = await store.listInterruptedThreads(tenantId, limit);
  const lists = await Promise.all(
    threads.map(async (t) => {
      const [run] = await store.listRuns(t.tenantId, t.threadId, { limit: 1 });
      return threadApprovals(t, run);
    }),
  );
  return lists.flat().slice(0, limit);
}
