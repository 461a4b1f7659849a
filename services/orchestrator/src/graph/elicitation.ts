/**
 * MCP elicitation as a run interrupt (docs/mcp-client-features.md "Elicitation"). A tool call that
 * comes back needing the user's input (ToolCallResult.elicitation: the MCP broker answered the
 * server `cancel`) gets no ToolMessage: the tools node records it in `elicitations`, the elicit
 * node interrupts with `{type: "mcp_elicitation", ...}`, and the tools node runs the same call
 * again with the answer (ExecuteToolRequest.elicitation_answer_json). Its sibling calls are not run
 * again: they already have their ToolMessages. A delegated agent or a stateless run cannot be
 * resumed, so its call gets an error telling the model to report what is needed (as ask_human does).
 */
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { z } from 'zod';
import type { ToolCallElicitation } from '../tool-client.js';
import type { NodeShared } from './shared.js';
import { MCP_ELICITATION_INTERRUPT, type AgentStateType, type ElicitationEntry } from './state.js';

/** The resume value of an `mcp_elicitation` interrupt: `{action, content?}` (a bare action string is read as `{action}`). */
const ElicitationResume = z
  .object({
    action: z.enum(['accept', 'decline', 'cancel']),
    content: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])).optional(),
  })
  .strict();

export type ElicitationAnswer = NonNullable<ElicitationEntry['answer']>;

/** Parses a resume value; an error names the field that is wrong. */
export function parseElicitationResume(raw: unknown): { answer: ElicitationAnswer } | { error: string } {
  const parsed = ElicitationResume.safeParse(typeof raw === 'string' ? { action: raw } : raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.map(String).join('.') : 'resume value';
    return { error: `Invalid answer to the MCP server's request: ${where}: ${issue.message}` };
  }
  const { action, content } = parsed.data;
  if (content && action !== 'accept')
    return { error: `Invalid answer to the MCP server's request: content is given only with action "accept" (got "${action}")` };
  return { answer: { action, ...(content ? { content } : {}) } };
}

/** The interrupt value of a call waiting for the user's input. */
export function elicitationInterrupt(id: string, e: ElicitationEntry) {
  return {
    type: MCP_ELICITATION_INTERRUPT,
    tool_call_id: id,
    tool: e.tool,
    server: e.server,
    message: e.message,
    mode: e.mode,
    requested_schema: e.requested_schema,
    url: e.url,
  };
}

/**
 * The latest AI message and the ids of its tool calls that already have their ToolMessage: on the
 * tools node's pass after an elicitation, the results of the earlier pass follow the AI message.
 */
export function latestToolTurn(messages: readonly BaseMessage[]): { ai: AIMessage | undefined; answered: Set<string> } {
  const answered = new Set<string>();
  let i = messages.length - 1;
  for (; i >= 0 && ToolMessage.isInstance(messages[i]); i--) answered.add((messages[i] as ToolMessage).tool_call_id);
  const ai = messages[i];
  return { ai: ai && AIMessage.isInstance(ai) ? ai : undefined, answered };
}

/** Which of the tools node's calls wait for the user's input, and the answers its retries carry. */
export class ToolElicitations {
  private readonly pending: Record<string, ElicitationEntry> = {};
  private readonly held = new WeakSet<ToolMessage>();

  constructor(
    private readonly state: Pick<AgentStateType, 'elicitations'>,
    /** The run can be resumed by a user (not a delegated agent, not stateless). */
    private readonly canAsk: boolean,
    private readonly texts: NodeShared['texts'],
  ) {}

  /** The user's answer for the retry of a call that needed input. */
  answerFor(id: string): { elicitationAnswerJson?: string } {
    const answer = this.state.elicitations[id]?.answer;
    return answer ? { elicitationAnswerJson: JSON.stringify(answer) } : {};
  }

  /**
   * A call came back needing input: the message reported as its end event, kept out of the
   * conversation (`isHeld`); where nobody can answer, the error the model reads instead.
   */
  hold(tc: { id: string; name: string }, e: ToolCallElicitation): ToolMessage {
    if (!this.canAsk) {
      return new ToolMessage({
        content: this.texts.elicitation.unanswerable(tc.name, e.server, e.message),
        tool_call_id: tc.id,
        name: tc.name,
        status: 'error',
      });
    }
    this.pending[tc.id] = { tool: tc.name, server: e.server, message: e.message, mode: e.mode, requested_schema: e.requestedSchema, url: e.url };
    const stand = new ToolMessage({ content: `Waiting for the user's input: ${e.message}`, tool_call_id: tc.id, name: tc.name });
    this.held.add(stand);
    return stand;
  }

  isHeld(m: ToolMessage): boolean {
    return this.held.has(m);
  }

  /** The state update: the calls waiting now (the answered ones ran). */
  update(): { elicitations?: Record<string, ElicitationEntry> } {
    const had = Object.keys(this.state.elicitations).length > 0;
    return had || Object.keys(this.pending).length > 0 ? { elicitations: this.pending } : {};
  }
}
