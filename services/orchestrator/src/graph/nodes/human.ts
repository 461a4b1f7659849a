import { interrupt, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { ToolMessage } from '@langchain/core/messages';
import { ctxOf, pendingCalls, type NodeShared, type RunContextDeps } from '../shared.js';
import { USER_INPUT_INTERRUPT, type AgentStateType } from '../state.js';

/**
 * Seed 001 §7.2: each pending ask_human call suspends the run with a `user_input_request`
 * interrupt; the resume value (a string, or {answer}) becomes the call's ToolMessage.
 */
export function humanNode(deps: RunContextDeps, shared: Pick<NodeShared, 'texts'>) {
  const { texts } = shared;
  return (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const out: ToolMessage[] = [];
    const reply = (id: string, content: string, ok: boolean) =>
      out.push(new ToolMessage({ content, tool_call_id: id, name: 'ask_human', status: ok ? 'success' : 'error' }));
    for (const tc of pendingCalls(state.messages, 'ask_human')) {
      const id = tc.id ?? '';
      // Nobody can resume a delegated agent or a stateless run.
      if (state.parent_context !== null || ctx.ephemeral) {
        reply(id, texts.askHuman.subagent, false);
        continue;
      }
      const args = (tc.args ?? {}) as Record<string, unknown>;
      const question = typeof args.question === 'string' ? args.question.trim() : '';
      if (question === '') {
        reply(id, texts.askHuman.invalid('"question" must be a non-empty string'), false);
        continue;
      }
      const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
      const dflt = text(args.default);
      const raw = interrupt({
        type: USER_INPUT_INTERRUPT,
        tool_call_id: id,
        question,
        context: text(args.context) ?? '',
        default: dflt ?? null,
        required: args.required !== false,
      });
      const obj = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : undefined;
      const given =
        typeof raw === 'string'
          ? raw
          : (text(obj?.answer) ?? text(obj?.response) ?? text(obj?.args) ?? (raw === undefined || raw === null ? '' : JSON.stringify(raw)));
      const answer = given.trim() === '' ? (dflt ?? '') : given;
      ctx.logger.info({ tool_call_id: id, answered: answer !== '' }, 'ask_human answered');
      reply(id, answer === '' ? texts.askHuman.noAnswer : answer, true);
    }
    return { messages: out };
  };
}
