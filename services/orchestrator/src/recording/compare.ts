/**
 * Compares the model request a replay makes with the recorded one. Only what the model is shown
 * counts: each message's type, content, tool calls (name, arguments, id), tool call id and status,
 * and the names and schemas of the tools offered. Message ids and provider metadata differ between
 * any two runs and are ignored; so is the time stamp the system prompt carries (prompts.ts
 * `currentDatetimeTag`), which differs between the recording and the replay by design.
 */
import { isDeepStrictEqual } from 'node:util';
import type { RecordedMessage, RecordedTool } from './format.js';

export interface RequestDifference {
  /** `messages` (count), `messages[i].<field>`, or `tools`. */
  path: string;
  expected: unknown;
  actual: unknown;
}

const DATETIME_TAG = /<current_datetime>[^<]*<\/current_datetime>/g;

const normalizeContent = (c: unknown): unknown => (typeof c === 'string' ? c.replace(DATETIME_TAG, '<current_datetime/>') : c);

/** The fields of a message the model sees. */
function visible(m: RecordedMessage): Record<string, unknown> {
  const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as Array<{ id?: unknown; name?: unknown; args?: unknown }>) : [];
  return {
    type: m.type,
    content: normalizeContent(m.content),
    tool_calls: calls.map((tc) => ({ id: tc.id ?? null, name: tc.name, args: tc.args ?? {} })),
    tool_call_id: m.tool_call_id ?? null,
    status: m.type === 'tool' ? (m.status ?? 'success') : null,
  };
}

/** The first difference between the recorded request and the replayed one, or null when they match. */
export function firstRequestDifference(
  expected: { messages: RecordedMessage[]; tools: RecordedTool[] },
  actual: { messages: RecordedMessage[]; tools: RecordedTool[] },
): RequestDifference | null {
  const n = Math.min(expected.messages.length, actual.messages.length);
  for (let i = 0; i < n; i++) {
    const e = visible(expected.messages[i]!);
    const a = visible(actual.messages[i]!);
    for (const field of Object.keys(e)) {
      if (!isDeepStrictEqual(e[field], a[field])) return { path: `messages[${i}].${field}`, expected: e[field], actual: a[field] };
    }
  }
  if (expected.messages.length !== actual.messages.length) {
    return { path: 'messages', expected: `${expected.messages.length} messages`, actual: `${actual.messages.length} messages` };
  }
  const tools = (list: RecordedTool[]) => list.map((t) => ({ name: t.name, parameters: t.parameters }));
  if (!isDeepStrictEqual(tools(expected.tools), tools(actual.tools))) {
    return { path: 'tools', expected: expected.tools.map((t) => t.name), actual: actual.tools.map((t) => t.name) };
  }
  return null;
}
