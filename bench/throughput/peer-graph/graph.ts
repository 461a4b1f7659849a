/**
 * The peer's graph for bench/throughput: the same 3-step run as AgentLoop's scripted workload,
 * as a plain LangGraph app served by `langgraph dev`. An agent node calls a deterministic chat
 * model that makes two `now` tool calls, one per turn, then answers; a tools node runs them.
 *
 * Like AgentLoop's scripted model it is a real `BaseChatModel` (callbacks, message objects) and
 * picks its turn from the conversation (AI messages since the last human one), so a run is the
 * same work on both sides. `config.configurable.delay_ms` makes every turn wait that long (the
 * in-flight workload's 1 s model calls); the default is no wait.
 *
 * This file is copied into `.peer/` when the bench starts the peer, so that it resolves the
 * peer's own packages; it type-checks against the root's (same versions).
 */
import { BaseChatModel, type BaseChatModelCallOptions } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import type { RunnableConfig } from '@langchain/core/runnables';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';

interface ScriptCallOptions extends BaseChatModelCallOptions {
  delay_ms?: number;
}

/** Two tool calls, then an answer; zero latency unless `delay_ms` is given. */
class ScriptedPeerModel extends BaseChatModel<ScriptCallOptions> {
  _llmType(): string {
    return 'scripted-peer';
  }

  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    let turn = 0;
    for (let i = messages.length - 1; i >= 0; i--) {
      const type = messages[i]!.getType();
      if (type === 'human') break;
      if (type === 'ai') turn++;
    }
    if (options.delay_ms) await new Promise((resolve) => setTimeout(resolve, options.delay_ms));
    const message =
      turn < 2
        ? new AIMessage({ content: '', tool_calls: [{ id: `call_s${turn + 1}_1`, name: 'now', args: {}, type: 'tool_call' }] })
        : new AIMessage({ content: 'It is now.' });
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}

const now = tool(async () => `Current time: ${new Date().toISOString()}`, {
  name: 'now',
  description: 'The current date and time (UTC).',
  schema: z.object({}),
});

const model = new ScriptedPeerModel({});

async function agent(state: typeof MessagesAnnotation.State, config: RunnableConfig) {
  const delay = Number((config.configurable as { delay_ms?: unknown } | undefined)?.delay_ms ?? 0);
  const reply = await model.invoke(state.messages, { ...config, delay_ms: Number.isFinite(delay) ? delay : 0 });
  return { messages: [reply] };
}

function route(state: typeof MessagesAnnotation.State): 'tools' | typeof END {
  const last = state.messages[state.messages.length - 1];
  return last?.getType() === 'ai' && ((last as AIMessage).tool_calls?.length ?? 0) > 0 ? 'tools' : END;
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', agent)
  .addNode('tools', new ToolNode([now]))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', route, ['tools', END])
  .addEdge('tools', 'agent')
  .compile();
