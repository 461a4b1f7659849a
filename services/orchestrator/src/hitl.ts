/**
 * The langchain v1 human-in-the-loop protocol (what agent-chat-ui renders and answers) on top of
 * AgentLoop's tool approval interrupts: the `action_requests` / `review_configs` a tool approval
 * interrupt carries beside its own fields, the `{decisions: [...]}` resume it accepts beside the
 * `{decision}` form, and the interrupt-only `values` chunk a run streams when it stops.
 */
import type { JsonObject } from '@agentloop/store';
import { parseApprovalAnswer, type ParsedApprovalAnswer } from './approval-client.js';
import { isDelegationRequest } from './delegation.js';
import { toJsonValue } from './serialize.js';

/** The decisions a tool approval allows, in langchain v1's words (`review_configs[].allowed_decisions`). */
export const HITL_DECISIONS = ['approve', 'edit', 'reject'] as const;

/** One tool call awaiting review (langchain v1 `ActionRequest`). */
export interface ActionRequest {
  name: string;
  args: unknown;
  description: string;
}

/** What may be decided about an action request (langchain v1 `ReviewConfig`). */
export interface ReviewConfig {
  action_name: string;
  allowed_decisions: Array<(typeof HITL_DECISIONS)[number]>;
}

/**
 * The langchain v1 `HITLRequest` of one tool call awaiting approval. AgentLoop raises one interrupt
 * per call, so both lists have one entry and a `{decisions}` resume carries one decision.
 */
export function hitlRequest(
  tc: { name: string; args: unknown },
  reason: string,
  riskLevel: string,
): { action_requests: ActionRequest[]; review_configs: ReviewConfig[] } {
  return {
    action_requests: [{ name: tc.name, args: tc.args ?? {}, description: `${tc.name} needs approval: ${reason} (risk: ${riskLevel})` }],
    review_configs: [{ action_name: tc.name, allowed_decisions: [...HITL_DECISIONS] }],
  };
}

/** A human's answer to a tool approval; `edited_args` when the call is approved with other arguments. */
export interface ApprovalResume extends ParsedApprovalAnswer {
  edited_args?: Record<string, unknown>;
}

const MAX_TEXT = 2000;
const text = (v: unknown): string => (typeof v === 'string' ? v.slice(0, MAX_TEXT) : '');
const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Reads the resume of a tool approval interrupt for the call `tool`:
 * - langchain v1: `{decisions: [d]}` (one decision per action request, so exactly one), where d is
 *   `{type: "approve"}`, `{type: "reject", message?}` or `{type: "edit", edited_action: {name, args}}`;
 *   a bare decision `{type: "edit", edited_action}` is read the same way. `by` may be given on the
 *   resume or on the decision (the client's label for the audit trail).
 * - AgentLoop's own forms (`"approve"`, `{decision: "reject", by, comment}`...; see parseApprovalAnswer).
 *
 * An edit may change the arguments only: an `edited_action.name` other than the call's tool is
 * refused (the model asked for that tool; a different one would skip the model's and the rules'
 * view of what runs), as are arguments that are not a JSON object.
 *
 * `{answer}` when understood; `{error}` when not — a message saying why, or undefined for an answer
 * in no known form (the caller asks again with its own wording).
 */
export function parseApprovalResume(value: unknown, tool: string): { answer: ApprovalResume } | { error: string | undefined } {
  if (isPlainObject(value) && 'decisions' in value) {
    const list = value.decisions;
    if (!Array.isArray(list) || list.length !== 1) {
      const got = Array.isArray(list) ? `${list.length} decisions` : 'no list';
      return { error: `"decisions" must hold one decision per action request (this interrupt has 1 action request, for ${tool}); got ${got}` };
    }
    return parseDecision(list[0], tool, text(value.by));
  }
  if (isPlainObject(value) && value.type === 'edit') return parseDecision(value, tool, '');
  const legacy = parseApprovalAnswer(value);
  return legacy ? { answer: legacy } : { error: undefined };
}

function parseDecision(d: unknown, tool: string, by: string): { answer: ApprovalResume } | { error: string } {
  if (!isPlainObject(d)) return { error: 'a decision must be an object {"type": "approve" | "edit" | "reject"}' };
  const who = by || text(d.by);
  switch (d.type) {
    case 'approve':
      return { answer: { decision: 'approved', by: who, comment: text(d.message) || text(d.comment) } };
    case 'reject':
      return { answer: { decision: 'rejected', by: who, comment: text(d.message) || text(d.comment) } };
    case 'edit': {
      const action = d.edited_action;
      if (!isPlainObject(action)) return { error: 'an "edit" decision needs "edited_action": {"name", "args"}' };
      if (action.name !== tool) {
        return {
          error: `edit refused: "edited_action.name" must be the tool being approved (${JSON.stringify(tool)}), got ${JSON.stringify(action.name)}; an edit may change the arguments only — reject the call instead`,
        };
      }
      if (!isPlainObject(action.args)) return { error: 'edit refused: "edited_action.args" must be a JSON object' };
      return { answer: { decision: 'approved', by: who, comment: text(d.message) || text(d.comment), edited_args: action.args } };
    }
    default:
      return { error: `unknown decision type ${JSON.stringify(d.type)}: expected "approve", "edit" or "reject"` };
  }
}

/**
 * A graph `values` chunk that only reports interrupts (`{__interrupt__: [...]}`, what LangGraph
 * streams when a run stops at one), as clients see it: the interrupts that wait for a human,
 * alone — not run through the values filter, which would make it `{messages: []}`. Null when it
 * holds only internal (delegation) interrupts and is not published; undefined when the chunk
 * is not an interrupt-only chunk.
 */
export function interruptOnlyValues(data: unknown): JsonObject | null | undefined {
  if (!isPlainObject(data) || !('__interrupt__' in data) || 'messages' in data) return undefined;
  const list = Array.isArray(data.__interrupt__) ? (data.__interrupt__ as Array<{ id?: unknown; value?: unknown } | null>) : [];
  const human = list
    .filter((i) => !isDelegationRequest(i?.value))
    .map((i) => ({ ...(typeof i?.id === 'string' && i.id ? { id: i.id } : {}), value: toJsonValue(i?.value) }));
  return human.length === 0 ? null : ({ __interrupt__: human } as JsonObject);
}
