import { interrupt, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { elicitationInterrupt, latestToolTurn, parseElicitationResume } from '../elicitation.js';
import { ctxOf, type NodeShared, type RunContextDeps } from '../shared.js';
import type { AgentStateType } from '../state.js';

/**
 * Suspends the run with an `mcp_elicitation` interrupt for each tool call an MCP server asked the
 * user's input for (in call order); an answer that is not `{action, content?}` asks again, naming
 * what is wrong. The answers go to state; the tools node then runs those calls again with them
 * (graph/elicitation.ts). Re-executed from the top on resume: earlier answers are replayed.
 */
export function elicitNode(deps: RunContextDeps, shared: Pick<NodeShared, 'texts'>) {
  const { texts } = shared;
  return (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const elicitations = { ...state.elicitations };
    for (const tc of latestToolTurn(state.messages).ai?.tool_calls ?? []) {
      const id = tc.id ?? '';
      const e = elicitations[id];
      if (!e || e.answer) continue;
      const request = elicitationInterrupt(id, e);
      let parsed = parseElicitationResume(interrupt(request));
      while ('error' in parsed) parsed = parseElicitationResume(interrupt({ ...request, error: `${parsed.error}. ${texts.elicitation.badAnswer}` }));
      elicitations[id] = { ...e, answer: parsed.answer };
      ctx.logger.info({ tool: e.tool, tool_call_id: id, mcp_server: e.server, action: parsed.answer.action }, 'MCP elicitation answered');
    }
    return { elicitations };
  };
}
