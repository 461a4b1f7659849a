/**
 * What a client may write into a thread's agent state from outside a run: a run's
 * `command.update` and `POST /threads/{id}/state` (LangGraph's updateState). Only the keys a
 * conversation owner legitimately edits are writable — messages, the todo list, the model
 * preference, the loop limit (which every new run's input sets again anyway). Everything else is the runtime's own bookkeeping, and some of it guards safety:
 * `approvals` holds the human/rule verdicts the tools node obeys, so a client that could write
 * it (or slip a tool call in under an id that already has a verdict) could run a tool nobody
 * approved. Hence also: any update that touches `messages` clears `approvals`, so tool calls of
 * an edited history are "never checked" and blocked until the approve node judges them again.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { RunInputError } from '../errors.js';
import { parseModelPref } from '../routing.js';
import { parseInputMessages } from '../serialize.js';
import { validateTodos } from '../todos.js';
import { MAX_LOOPS_MAX, MAX_LOOPS_MIN } from '../limits.js';
import type { AgentUpdate } from './state.js';

/** State keys a client may write; the rest (approvals, usage, loop counters, ids...) are the runtime's. */
export const CLIENT_WRITABLE_KEYS = ['messages', 'todos', 'model_pref', 'max_loops'] as const;

/** The nodes of the agent graph (graph.ts), as `goto` / `as_node` may name them. */
export const AGENT_NODES = ['compact', 'agent', 'approve', 'await_approval', 'tools', 'elicit', 'delegate', 'human', 'finalize'] as const;

/**
 * A client's values as a state update of the agent graph; throws RunInputError naming the
 * offending key. Accepts an object or LangGraph's list of [key, value] pairs.
 */
export function clientStateUpdate(raw: unknown, where: string): AgentUpdate {
  const entries = updateEntries(raw, where);
  const update: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    if (!(CLIENT_WRITABLE_KEYS as readonly string[]).includes(key)) {
      throw new RunInputError(`${where}.${key} cannot be written by a client: writable state keys are ${CLIENT_WRITABLE_KEYS.join(', ')}`);
    }
    if (key === 'messages') {
      let parsed: BaseMessage[];
      try {
        parsed = parseInputMessages({ messages: value });
      } catch (err) {
        // The parser names the run input ("input.messages[0] ..."); name the field of this update.
        throw new RunInputError(`${where}.${(err as Error).message.replace(/^input\./, '')}`, { cause: err });
      }
      update.messages = [...((update.messages as BaseMessage[] | undefined) ?? []), ...parsed];
      // Verdicts belong to the tool calls they judged; an edited history is judged again.
      update.approvals = {};
    } else if (key === 'todos') {
      const v = validateTodos(value);
      if (!v.ok) throw new RunInputError(`${where}.todos: ${v.error}`);
      update.todos = v.todos;
    } else if (key === 'max_loops') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < MAX_LOOPS_MIN || value > MAX_LOOPS_MAX) {
        throw new RunInputError(`${where}.max_loops must be an integer between ${MAX_LOOPS_MIN} and ${MAX_LOOPS_MAX}, got ${JSON.stringify(value)}`);
      }
      update.max_loops = value;
    } else {
      update.model_pref = parseModelPref(value, `${where}.model_pref`);
    }
  }
  return update as AgentUpdate;
}

/** `goto` of a command: a node name or a list of them (LangGraph's Send objects are not accepted). */
export function parseGoto(raw: unknown, where: string): string | string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const list = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(list) || list.length === 0) throw new RunInputError(`${where} must be a node name or a non-empty list of node names`);
  for (const node of list) {
    if (typeof node !== 'string' || !(AGENT_NODES as readonly string[]).includes(node)) {
      throw new RunInputError(`${where}: ${JSON.stringify(node)} is not a node of the agent graph (nodes: ${AGENT_NODES.join(', ')})`);
    }
  }
  return typeof raw === 'string' ? raw : (list as string[]);
}

function updateEntries(raw: unknown, where: string): Array<[string, unknown]> {
  if (Array.isArray(raw)) {
    return raw.map((pair, i) => {
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') throw new RunInputError(`${where}[${i}] must be a [key, value] pair`);
      return [pair[0], pair[1]] as [string, unknown];
    });
  }
  if (raw && typeof raw === 'object') return Object.entries(raw);
  throw new RunInputError(`${where} must be an object of state keys (or a list of [key, value] pairs)`);
}
