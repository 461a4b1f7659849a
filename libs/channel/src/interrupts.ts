import type { ApprovalAnswer, ApprovalPrompt, Channel } from './channel.js';
import { elicitationPromptOf, elicitationQuestion, elicitationResume } from './elicitation.js';
import { displayNameOf } from './tool-names.js';

/** An interrupt of a run as `__interrupt__` lists it. */
export interface PendingInterrupt {
  id?: string;
  value: unknown;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** The interrupts of a `values`/`updates` payload (`__interrupt__`), or none. */
export function interruptsOf(payload: unknown): PendingInterrupt[] {
  if (!isObj(payload) || !Array.isArray(payload.__interrupt__)) return [];
  return payload.__interrupt__.filter(isObj).map((i) => ({ ...(typeof i.id === 'string' ? { id: i.id } : {}), value: i.value }));
}

/** A tool approval interrupt (AgentLoop's `tool_approval`, or langchain's action_requests) as a prompt. */
export function approvalPromptOf(value: unknown): ApprovalPrompt | undefined {
  if (!isObj(value)) return undefined;
  const action = Array.isArray(value.action_requests) && isObj(value.action_requests[0]) ? value.action_requests[0] : undefined;
  const review = Array.isArray(value.review_configs) && isObj(value.review_configs[0]) ? value.review_configs[0] : undefined;
  if (value.type !== 'tool_approval' && !action) return undefined;
  const tool = String(value.tool ?? action?.name ?? 'tool');
  const allowed = Array.isArray(review?.allowed_decisions) ? review.allowed_decisions.map(String) : ['approve', 'reject'];
  return {
    tool,
    displayName: displayNameOf(tool, value),
    args: value.args ?? action?.args,
    ...(typeof value.reason === 'string' ? { reason: value.reason } : typeof action?.description === 'string' ? { reason: action.description } : {}),
    ...(typeof value.risk_level === 'string' ? { riskLevel: value.risk_level } : {}),
    allowed,
  };
}

/** The question of an `ask_human` interrupt (`{type: "user_input_request", question}`). */
export function questionOf(value: unknown): string | undefined {
  if (!isObj(value) || value.type !== 'user_input_request') return undefined;
  return typeof value.question === 'string' ? value.question : '';
}

/** langchain v1's human-in-the-loop resume: one decision for the one action request. */
export function approvalResume(answer: ApprovalAnswer): { decisions: Obj[] } {
  if (answer.type === 'approve') return { decisions: [{ type: 'approve' }] };
  return { decisions: [{ type: 'reject', ...(answer.message ? { message: answer.message } : {}) }] };
}

/**
 * Asks the person through the channel and returns the resume value, or undefined when the
 * interrupt is of a kind a channel cannot answer, or the channel answers later (a chat app's
 * buttons): then the run stays interrupted until `ChatEngine.resume`.
 */
export async function answerInterrupt(channel: Channel, interrupt: PendingInterrupt, threadId?: string): Promise<unknown> {
  const approval = approvalPromptOf(interrupt.value);
  if (approval) {
    const answer = await channel.askApproval(threadId ? { ...approval, threadId } : approval);
    return answer === undefined ? undefined : approvalResume(answer);
  }
  const question = questionOf(interrupt.value);
  if (question !== undefined) return channel.askQuestion(question);
  const elicitation = elicitationPromptOf(interrupt.value);
  if (elicitation) {
    const reply = await channel.askQuestion(elicitationQuestion(elicitation));
    return reply === undefined ? undefined : elicitationResume(elicitation, reply);
  }
  return undefined;
}

/** The interrupts a thread waits on (the LangGraph thread's `interrupts` by task, else `values.__interrupt__`). */
export function threadInterrupts(thread: { status?: string; interrupts?: unknown; values?: unknown }): PendingInterrupt[] {
  if (thread.status !== 'interrupted') return [];
  if (isObj(thread.interrupts)) {
    const all = Object.values(thread.interrupts).flatMap((list) => (Array.isArray(list) ? list.filter(isObj) : []));
    if (all.length) return all.map((i) => ({ ...(typeof i.id === 'string' ? { id: i.id } : {}), value: i.value }));
  }
  return interruptsOf(thread.values);
}
