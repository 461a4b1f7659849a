/**
 * The approval service's verdicts on the bus tool calls of one AI message (seed 001 §7.3): the one
 * place they are asked for. The agent step asks right after the model answered, so the calls and
 * their verdicts land in one checkpoint (issue 9: one superstep fewer per tool turn); the approve
 * node asks on the paths where the agent step did not (a history a client wrote, a checkpoint
 * taken before the agent step judged its calls); await_approval re-checks an edited call with
 * `approvalCall` and `approvalContext`.
 */
import { errorMessage } from '@agentloop/core';
import type { ToolCall } from '@langchain/core/messages';
import { isLocalTool } from '../local-tools.js';
import { tightenVerdict } from '../agent-config.js';
import { runPolicy } from '../environments.js';
import { MCP_PROVIDER } from '../tool-client.js';
import { sharedToolCallIds } from '../tool-call-ids.js';
import type { AgentGraphDeps, ApprovalEntry, RunContext } from './state.js';

/** The argument naming the file a tool writes, for tools whose approval depends on where it lands. */
const PATH_ARGS: Readonly<Record<string, string>> = { write_file: 'file_path' };
/** How much of a file's end an append's approval sees (CheckApprovalRequest.preceding_text). */
const APPEND_CONTEXT_BYTES = 4096;

/** What asking for verdicts needs: the approval service, and the tool-runner for paths and providers. */
export interface VerdictDeps {
  approvals: NonNullable<AgentGraphDeps['approvals']>;
  tools?: Pick<AgentGraphDeps['tools'], 'inspectPath' | 'providerOf'>;
}

/** The approval service's view of a tool call; await_approval records decisions with the same one. */
export const approvalCall = (ctx: RunContext, tc: { id?: string; name: string; args: unknown }, subagent: boolean) => ({
  tenantId: ctx.tenantId,
  threadId: ctx.threadId,
  runId: ctx.runId,
  toolCallId: tc.id ?? '',
  toolName: tc.name,
  args: tc.args,
  subagent,
});

/**
 * What the rules need besides the arguments for calls that name a file: where the path really
 * lands (an absolute spelling of uploads/x is uploads/x) and, for an append, the end of the file
 * it extends (a secret split across two appends is seen whole). Asked of the tool-runner, which
 * resolves paths exactly as the write will. When it cannot say, the rules get nothing extra and
 * judge the raw path, failing closed on what they cannot place.
 */
export async function approvalContext(
  deps: { tools?: VerdictDeps['tools'] },
  ctx: RunContext,
  tc: { name: string; args: unknown },
): Promise<{ resolvedPaths?: Record<string, string>; precedingText?: string }> {
  const arg = PATH_ARGS[tc.name];
  const args = (tc.args ?? {}) as Record<string, unknown>;
  const raw = arg ? args[arg] : undefined;
  const tools = deps.tools;
  if (!arg || typeof raw !== 'string' || raw === '' || !tools?.inspectPath) return {};
  const append = tc.name === 'write_file' && args.append === true;
  try {
    const seen = await tools.inspectPath(ctx.tenantId, ctx.workspaceThreadId ?? ctx.threadId, raw, { tailBytes: append ? APPEND_CONTEXT_BYTES : 0 });
    if ('refused' in seen) return {}; // the tool refuses the path itself
    return { resolvedPaths: { [arg]: seen.relativePath }, ...(append && seen.tail !== '' ? { precedingText: seen.tail } : {}) };
  } catch (err) {
    ctx.logger.warn({ tool: tc.name, err: errorMessage(err) }, 'path not inspected before approval; the rules judge the raw path');
    return {};
  }
}

/**
 * The calls the approval service judges: bus calls (local tools change only graph state), minus
 * calls sharing an id — those are never run (see tools), and asking about them would only mix verdicts.
 */
export function judgedCalls(calls: readonly ToolCall[]): ToolCall[] {
  const shared = sharedToolCallIds(calls);
  return calls.filter((tc) => !isLocalTool(tc.name) && !shared.has(tc.id ?? ''));
}

/** Whether every call the service judges has its verdict in `approvals` (false when one was never asked about). */
export const hasVerdicts = (calls: readonly ToolCall[], approvals: Readonly<Record<string, ApprovalEntry>>): boolean =>
  judgedCalls(calls).every((tc) => approvals[tc.id ?? ''] !== undefined);

/** Whether a verdict waits for a human's decision (→ await_approval). */
export const awaitsHuman = (approvals: Readonly<Record<string, ApprovalEntry>>): boolean =>
  Object.values(approvals).some((a) => a.action === 'require_approval' && a.decision === undefined);

/**
 * Asks the approval service about every judged call (in parallel) and returns the verdicts by tool
 * call id. Fails closed: a call without a verdict gets `unavailable` and is not run. Calls the rules
 * deny are recorded in the audit trail. The run's agent configuration may only tighten a verdict
 * (`require_approval`, `skills`: agent-config.ts). A delegated agent (`subagent`) has no human to
 * ask: what would need one is denied.
 */
export async function judgeToolCalls(
  deps: VerdictDeps,
  ctx: RunContext,
  calls: readonly ToolCall[],
  subagent: boolean,
): Promise<Record<string, ApprovalEntry>> {
  const policy = runPolicy(ctx);
  const approvals: Record<string, ApprovalEntry> = {};
  await Promise.all(
    judgedCalls(calls).map(async (tc) => {
      const id = tc.id ?? '';
      const call = approvalCall(ctx, tc, subagent);
      let entry: ApprovalEntry;
      try {
        const verdict = await deps.approvals.check({ ...call, ...(await approvalContext(deps, ctx, tc)) });
        entry = { ...tightenVerdict(verdict, tc, policy, { mcp: deps.tools?.providerOf?.(tc.name) === MCP_PROVIDER }), tool: tc.name };
      } catch (err) {
        ctx.logger.error({ tool: tc.name, tool_call_id: id, err: errorMessage(err) }, 'no approval verdict; the call will not run');
        approvals[id] = { action: 'unavailable', reason: errorMessage(err), risk_level: 'unspecified', rule: '', tool: tc.name, decision: 'unavailable' };
        return;
      }
      if (entry.action === 'deny' || (entry.action === 'require_approval' && subagent)) {
        entry.decision = 'denied';
        entry.by = 'rules';
        await deps.approvals
          .record(
            call,
            { ...entry, action: entry.action },
            'denied',
            'rules',
            subagent && entry.action === 'require_approval' ? 'delegated agent: no human to ask' : '',
          )
          .catch((err: unknown) => ctx.logger.warn({ tool: tc.name, err: errorMessage(err) }, 'denial not recorded in the audit trail'));
      }
      if (entry.action !== 'allow')
        ctx.logger.info({ tool: tc.name, tool_call_id: id, action: entry.action, rule: entry.rule, risk: entry.risk_level }, 'tool call approval');
      approvals[id] = entry;
    }),
  );
  return approvals;
}
