import { Command, type LangGraphRunnableConfig } from '@langchain/langgraph';
import type { ToolProgress } from '@agentloop/bus';
import type { ToolCallInput } from '../../tool-client.js';
import { ToolMessage } from '@langchain/core/messages';
import { instruments, SpanStatusCode, withSpan } from '@agentloop/telemetry';
import { executeWithLedger } from '../../effect-ledger.js';
import { isLocalTool, runLocalTool } from '../../local-tools.js';
import { withToolEvents } from '../tool-events.js';
import { runAcceptance, toolResultContent } from '../tool-media.js';
import { isMemoryTool, runMemoryTool } from '../../memory/memory-tools.js';
import { mentionsOf } from '../../mentions.js';
import { skillGate } from '../skill-gate.js';
import { latestToolTurn, ToolElicitations } from '../elicitation.js';
import { sharedToolCallIds } from '../../tool-call-ids.js';
import { startTurn } from '../model-calls.js';
import { ctxOf, type NodeShared, type RunContextDeps } from '../shared.js';
import type { AgentGraphDeps, AgentStateType } from '../state.js';

export type ToolsDeps = RunContextDeps & Pick<AgentGraphDeps, 'tools' | 'ledger' | 'approvals' | 'delegation' | 'skills'>;

/** The ToolMessage standing for a call that the approval step stopped, or null to run it. */
export function approvalBlock(
  deps: Pick<AgentGraphDeps, 'approvals'>,
  texts: NodeShared['texts'],
  state: Pick<AgentStateType, 'approvals'>,
  tc: { id?: string; name: string },
): ToolMessage | null {
  if (!deps.approvals) return null;
  const id = tc.id ?? '';
  const a = state.approvals[id];
  const block = (content: string) => new ToolMessage({ content, tool_call_id: id, name: tc.name, status: 'error' });
  if (!a) return block(texts.approval.unavailable(tc.name, 'the call was never checked'));
  switch (a.decision) {
    case undefined:
      return a.action === 'allow' ? null : block(texts.approval.unavailable(tc.name, 'no decision was made'));
    case 'approved':
      return null;
    case 'rejected':
      return block(texts.approval.rejected(a.reason, a.comment ?? ''));
    case 'denied':
      return block(a.action === 'require_approval' ? texts.approval.subagent(tc.name, a.reason) : texts.approval.denied(tc.name, a.reason));
    case 'not_recorded':
      return block(texts.approval.notRecorded(tc.name));
    case 'unavailable':
      return block(texts.approval.unavailable(tc.name, a.reason));
  }
}

/**
 * todo_write / todo_read run here (they change graph state); delegate_task and ask_human are left
 * to their own nodes; the memory tools run here on the run's store; every other call goes over the
 * bus to tool-runner, in parallel; failures become "Error:" ToolMessages. A call an MCP server asked the
 * user's input for gets no ToolMessage yet: the elicit node interrupts, then this node runs it again
 * with the answer (graph/elicitation.ts); calls answered by the earlier pass are not run again.
 */
export function toolsNode(deps: ToolsDeps, shared: Pick<NodeShared, 'language' | 'texts'>) {
  const { language, texts } = shared;
  return async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const { ai, answered } = latestToolTurn(state.messages);
    const calls = (ai?.tool_calls ?? []).filter((tc) => !answered.has(tc.id ?? ''));
    const elicitations = new ToolElicitations(state, state.parent_context === null && !ctx.ephemeral, texts);
    const mentioned = new Set(mentionsOf(state.messages));
    const subagent = state.parent_context !== null;
    const shared = sharedToolCallIds(calls);
    const gate = await skillGate(deps, ctx, state);
    const results: Array<ToolMessage | null> = await Promise.all(
      calls.map(async (tc) => {
        if (shared.has(tc.id ?? '')) {
          // Fail closed: verdicts and recorded effects are per id, so none of these calls is safe to run.
          ctx.logger.warn({ tool: tc.name, tool_call_id: tc.id }, 'tool call id shared by several calls; not run');
          return new ToolMessage({ content: texts.approval.sharedId(tc.name, tc.id ?? ''), tool_call_id: tc.id ?? '', name: tc.name, status: 'error' });
        }
        if (isLocalTool(tc.name)) return null; // run below, in order, against the todo list (delegate_task: the delegate node)
        const refused = gate.refusal(tc);
        if (refused) {
          ctx.logger.info({ tool: tc.name, tool_call_id: tc.id }, 'tool call refused by the skills policy');
          return new ToolMessage({ content: refused, tool_call_id: tc.id ?? '', name: tc.name, status: 'error' });
        }
        const blocked = approvalBlock(deps, texts, state, tc);
        if (blocked) {
          ctx.logger.info({ tool: tc.name, tool_call_id: tc.id, decision: state.approvals[tc.id ?? '']?.decision ?? 'unchecked' }, 'tool call not run');
          return blocked;
        }
        const id = tc.id ?? '';
        const args = (deps.approvals ? state.approvals[id]?.edited_args : undefined) ?? tc.args;
        return withToolEvents(config, { id, name: tc.name, args }, ctx.logger, async (emit) => {
          if (isMemoryTool(tc.name)) {
            // Run here, on the run's tenant-bound store, after approval like any other call.
            const message = await runMemoryTool({ id, name: tc.name, args }, ctx.memory);
            ctx.logger.info({ tool: tc.name, tool_call_id: id, error: message.status === 'error' ? 'REJECTED' : undefined }, 'memory tool call');
            return message;
          }
          const started = Date.now();
          const call = {
            tenantId: ctx.tenantId,
            threadId: ctx.threadId,
            runId: ctx.runId,
            toolCallId: id,
            name: tc.name,
            // An approver's edit (await_approval, re-checked by the rules) replaces the model's arguments.
            args,
            onDemand: mentioned.has(tc.name),
            subagent,
            ...(ctx.workspaceThreadId ? { workspaceThreadId: ctx.workspaceThreadId } : {}),
            ...elicitations.answerFor(id),
          };
          // An idempotent tool may run again after a crash (that is what the flag says), so the ledger
          // — a store write before and after the call — would buy it nothing: only side-effecting
          // calls are claimed and recorded (issue 9: no work for a read-only tool that only a
          // side-effecting one needs).
          const idempotent = deps.tools.isIdempotent?.(tc.name) ?? false;
          // Progress the provider reports (an MCP server's notifications) streams as on_tool_event.
          const onProgress = ({ progress, total, message }: ToolProgress) =>
            emit({ type: 'progress', progress, ...(total !== undefined ? { total } : {}), ...(message ? { message } : {}) });
          const run = (c: ToolCallInput) => deps.tools.execute(c, undefined, {}, onProgress);
          const execute = () =>
            withSpan(
              `tool ${tc.name}`,
              {
                attributes: {
                  'gen_ai.operation.name': 'execute_tool',
                  'gen_ai.tool.name': tc.name,
                  'gen_ai.tool.call.id': id,
                  'agentloop.tool': tc.name,
                  'agentloop.tool_call_id': id,
                },
              },
              async (span) => {
                const r =
                  deps.ledger && !idempotent
                    ? await executeWithLedger(
                        deps.ledger,
                        { ...call, idempotent },
                        run,
                        deps.tools.recordedOutcome ? (c) => deps.tools.recordedOutcome!(c) : undefined,
                        deps.tools.reexecute ? (c) => deps.tools.reexecute!(c) : undefined,
                      )
                    : await run(call);
                if (r.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: r.errorCode ?? 'tool error' });
                return r;
              },
            );
          // Record and replay (issue 17): the step is the model call that asked for this tool call.
          const res = ctx.tape
            ? await ctx.tape.toolCall(Math.max(0, startTurn(state, ctx) - 1), { id, name: tc.name, args: call.args }, execute)
            : await execute();
          if (res.elicitation) {
            ctx.logger.info({ tool: tc.name, tool_call_id: id, mcp_server: res.elicitation.server }, "tool call needs the user's input");
            return elicitations.hold({ id, name: tc.name }, res.elicitation);
          }
          const metrics = instruments();
          const outcome = res.isError ? (res.errorCode ?? 'error') : 'ok';
          metrics.toolCalls.add(1, { 'agentloop.tool': tc.name, outcome });
          metrics.toolCallDuration.record((Date.now() - started) / 1000, { 'agentloop.tool': tc.name, outcome });
          ctx.logger.info({ tool: tc.name, tool_call_id: id, ms: Date.now() - started, error: res.isError ? res.errorCode : undefined }, 'tool call');
          // Images and audio (MCP tools) go into the ToolMessage for a model that takes them (tool-media.ts).
          const content = toolResultContent(res.content, res.media, runAcceptance(ctx));
          return new ToolMessage({ content, tool_call_id: id, name: tc.name, status: res.isError ? 'error' : 'success' });
        });
      }),
    );
    let todos = state.todos;
    let todosChanged = false;
    calls.forEach((tc, i) => {
      if (!isLocalTool(tc.name)) return;
      if (tc.name === 'delegate_task' && deps.delegation) return; // answered by the delegate node
      if (tc.name === 'ask_human') return; // answered by the human node
      const r = runLocalTool({ id: tc.id ?? '', name: tc.name, args: tc.args }, todos, language);
      if (r.todos) {
        todos = r.todos;
        todosChanged = true;
      }
      ctx.logger.info({ tool: tc.name, tool_call_id: tc.id, error: r.message.status === 'error' ? 'REJECTED' : undefined }, 'local tool call');
      results[i] = r.message;
    });
    // The todo list and the ToolMessages are written together, in one update (seed 000 §2.7).
    return new Command({
      update: {
        messages: results.filter((m): m is ToolMessage => m !== null && !elicitations.isHeld(m)),
        ...(todosChanged ? { todos } : {}),
        ...elicitations.update(),
      },
    });
  };
}
