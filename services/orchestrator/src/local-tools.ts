import { ToolMessage } from '@langchain/core/messages';
import { create, ToolMetadataSchema, ToolSpecSchema, type ToolSpec } from '@agentloop/proto';
import { promptTexts, type PromptLanguage } from './prompts.js';
import { TODO_PRIORITIES, TODO_STATUSES, todoSummary, validateTodos, type TodoItem } from './todos.js';

/**
 * Tools the orchestrator runs itself because they change graph state, not
 * files: they are intercepted in the tools node before the bus.
 */
export const LOCAL_TOOL_NAMES = ['todo_write', 'todo_read', 'delegate_task', 'ask_human'] as const;
export type LocalToolName = (typeof LOCAL_TOOL_NAMES)[number];

export const isLocalTool = (name: string): name is LocalToolName => (LOCAL_TOOL_NAMES as readonly string[]).includes(name);

const spec = (name: string, description: string, schema: Record<string, unknown>, displayName: string, subagent: boolean): ToolSpec =>
  create(ToolSpecSchema, {
    name,
    description,
    parametersJsonSchema: JSON.stringify(schema),
    metadata: create(ToolMetadataSchema, { category: 'orchestrator', tags: ['builtin'], idempotent: false, displayName, availableToSubagent: subagent }),
  });

export const TODO_WRITE_SPEC: ToolSpec = spec(
  'todo_write',
  [
    'Track multi-step tasks (3+ steps) so the user can see progress. Send the whole list each time; it replaces the previous one.',
    'Task states: pending | in_progress | completed. Required fields: content, status. Optional: id (generated when missing), priority (high|medium|low, default medium).',
    'Rules: mark a task in_progress BEFORE starting it; mark it completed IMMEDIATELY after finishing (do not batch); only ONE task in_progress at a time;',
    'do not mark a task completed if tests fail, errors occur or the work is incomplete.',
  ].join('\n'),
  {
    type: 'object',
    properties: {
      todos: {
        type: 'array',
        description: 'The complete task list.',
        items: {
          type: 'object',
          properties: {
            content: { type: 'string', description: 'What the task is.' },
            status: { type: 'string', enum: [...TODO_STATUSES] },
            id: { type: 'string', description: 'Stable task id; generated when missing.' },
            priority: { type: 'string', enum: [...TODO_PRIORITIES], default: 'medium' },
          },
          required: ['content', 'status'],
        },
      },
    },
    required: ['todos'],
  },
  'Updating the task list',
  true,
);

export const TODO_READ_SPEC: ToolSpec = spec(
  'todo_read',
  'Read the current task list to check what is pending, in progress or completed and what to work on next. Returns {ok, todos, summary}.',
  { type: 'object', properties: {} },
  'Reading the task list',
  true,
);

/** Seed 001 §5.2. Offered when an agent is @mentioned; executed by the graph's delegate node (see delegation.ts). */
export const DELEGATE_TASK_SPEC: ToolSpec = spec(
  'delegate_task',
  "Delegate an independent subtask to a delegated agent that works in its own context and shares the workspace. Returns the delegated agent's result.",
  {
    type: 'object',
    properties: {
      task: { type: 'string', description: 'Clear description of the subtask to accomplish.' },
      max_loops: { type: 'integer', minimum: 1, maximum: 500, default: 15, description: 'Maximum agent steps of the delegated agent.' },
    },
    required: ['task'],
  },
  'Delegating a subtask',
  false,
);

/**
 * Seed 001 §7.2. Offered to top-level runs; answered by the graph's human node, which suspends
 * the run (a LangGraph interrupt of type "user_input_request") until the user replies.
 */
export const ASK_HUMAN_SPEC: ToolSpec = spec(
  'ask_human',
  [
    'Ask the user for information you need to continue: a missing detail, a choice between options, or a confirmation.',
    "The run pauses until the user answers; the answer is this tool's result. Ask one clear, concise question per call.",
  ].join('\n'),
  {
    type: 'object',
    properties: {
      question: { type: 'string', description: 'The question to ask the user (clear and concise).' },
      context: { type: 'string', description: 'Additional context that helps the user answer.' },
      default: { type: 'string', description: 'Answer used when the user replies with nothing.' },
      required: { type: 'boolean', default: true, description: 'Whether an answer is required.' },
    },
    required: ['question'],
  },
  'Asking you a question',
  false,
);

/** The outcome of a local tool call: its ToolMessage, and the new todo list when it changed. */
export interface LocalToolResult {
  message: ToolMessage;
  todos?: TodoItem[];
}

/**
 * Runs one local tool call against the current todo list. The caller applies
 * calls of one AI message in order, threading `todos` through, and writes the
 * final list to state together with the ToolMessages.
 */
export function runLocalTool(
  call: { id: string; name: LocalToolName; args: Record<string, unknown> },
  todos: readonly TodoItem[],
  language: PromptLanguage,
): LocalToolResult {
  const t = promptTexts(language);
  const msg = (content: string, ok: boolean) => new ToolMessage({ content, tool_call_id: call.id, name: call.name, status: ok ? 'success' : 'error' });
  switch (call.name) {
    case 'todo_write': {
      const v = validateTodos(call.args.todos, language);
      if (!v.ok) return { message: msg(t.todoInvalid(v.error), false) };
      const s = todoSummary(v.todos);
      return { message: msg(t.todoUpdated({ inProgress: s.in_progress, pending: s.pending, completed: s.completed }), true), todos: v.todos };
    }
    case 'todo_read':
      return { message: msg(JSON.stringify({ ok: true, todos, summary: todoSummary(todos) }), true) };
    case 'delegate_task':
      return { message: msg(t.delegateUnavailable, false) };
    case 'ask_human':
      // Normally answered by the human node; reaching here means the graph has none.
      return { message: msg(t.askHuman.invalid('ask_human is not available in this deployment'), false) };
  }
}
