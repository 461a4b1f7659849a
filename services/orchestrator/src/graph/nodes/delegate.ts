import { interrupt, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { ToolMessage } from '@langchain/core/messages';
import {
  childConfig,
  childRunId,
  childThreadId,
  DELEGATION_INTERRUPT,
  delegationId,
  parseDelegateArgs,
  type DelegatedChild,
  type DelegationLimits,
  type DelegationRequest,
  type DelegationResume,
} from '../../delegation.js';
import { ctxOf, pendingCalls, type NodeShared, type RunContextDeps } from '../shared.js';
import type { AgentStateType } from '../state.js';

/**
 * Seed 001 Part 5. Validates the step's delegate_task calls, then suspends the graph
 * (`interrupt`) with the children to start; the run's executor starts them and ends the
 * job. The resume value carries each child's answer, which becomes the call's ToolMessage.
 * Re-executed from the top on resume: everything before `interrupt` is deterministic.
 */
export function delegateNode(deps: RunContextDeps & { delegation?: DelegationLimits }, shared: Pick<NodeShared, 'language' | 'texts'>) {
  const { language, texts } = shared;
  return (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    // Only routed here when delegation is configured (edges.ts: afterTools).
    const limits = deps.delegation!;
    const depth = ctx.depth ?? 0;
    const calls = pendingCalls(state.messages, 'delegate_task');
    const refused: ToolMessage[] = [];
    const children: DelegatedChild[] = [];
    const refuse = (id: string, content: string) => refused.push(new ToolMessage({ content, tool_call_id: id, name: 'delegate_task', status: 'error' }));
    calls.forEach((tc, index) => {
      const id = tc.id ?? '';
      if (depth >= limits.maxDepth) return refuse(id, texts.delegateDepth(limits.maxDepth));
      const args = parseDelegateArgs(tc.args, language);
      if (!args.ok) return refuse(id, texts.delegateInvalid(args.error));
      if (!id) return refuse(id, texts.delegateInvalid('the tool call has no id'));
      if (children.length >= limits.maxParallel) return refuse(id, texts.delegateTooMany(limits.maxParallel));
      const cfg = childConfig(ctx.runConfig ?? {}, { task: args.task, index, maxLoops: args.maxLoops });
      if (!cfg.ok) return refuse(id, texts.delegateInvalid(cfg.error));
      const runId = childRunId(ctx.runId, id);
      children.push({ tool_call_id: id, run_id: runId, thread_id: childThreadId(runId), task: args.task, max_loops: args.maxLoops, config: cfg.config });
    });
    if (refused.length > 0) ctx.logger.warn({ refused: refused.map((m) => m.content) }, 'delegate_task calls refused');
    if (children.length === 0) return { messages: refused };
    const request: DelegationRequest = {
      type: DELEGATION_INTERRUPT,
      delegation_id: delegationId(
        ctx.runId,
        children.map((c) => c.tool_call_id),
      ),
      children,
    };
    const resume = interrupt<DelegationRequest, DelegationResume | undefined>(request);
    const answers = children.map((c) => {
      // A resume meant for another delegation (stale or forged) answers nothing.
      const r = resume?.delegation_id === request.delegation_id ? resume.results?.[c.tool_call_id] : undefined;
      const content = r ? r.content : texts.delegateFailed('no result was recorded for this delegated agent');
      return new ToolMessage({
        content,
        tool_call_id: c.tool_call_id,
        name: 'delegate_task',
        status: r && !r.is_error ? 'success' : 'error',
        additional_kwargs: { agentloop_delegated_run: { run_id: c.run_id, thread_id: c.thread_id, status: r?.status ?? 'unknown' } },
      });
    });
    ctx.logger.info(
      { delegation_id: request.delegation_id, children: children.length, failed: answers.filter((m) => m.status === 'error').length },
      'delegated agents answered',
    );
    return { messages: [...refused, ...answers] };
  };
}
