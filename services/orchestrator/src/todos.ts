import { promptTexts, type PromptLanguage } from './prompts.js';

/** Task states (seed 000 §2.7). */
export const TODO_STATUSES = ['pending', 'in_progress', 'completed'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];
export const TODO_PRIORITIES = ['high', 'medium', 'low'] as const;
export type TodoPriority = (typeof TODO_PRIORITIES)[number];

/** A task as kept in state `todos`. */
export interface TodoItem {
  id: string;
  content: string;
  status: TodoStatus;
  priority: TodoPriority;
}

/** Bounds that keep the list (re-sent in every system prompt) small. */
export const TODO_MAX_ITEMS = 100;
export const TODO_MAX_CONTENT_CHARS = 2_000;

export type TodoValidation = { ok: true; todos: TodoItem[] } | { ok: false; error: string };

const isStatus = (v: unknown): v is TodoStatus => typeof v === 'string' && (TODO_STATUSES as readonly string[]).includes(v);
const isPriority = (v: unknown): v is TodoPriority => typeof v === 'string' && (TODO_PRIORITIES as readonly string[]).includes(v);

/**
 * Validates the `todos` argument of todo_write before anything changes
 * (seed 000 §2.7): `content` and `status` required, status one of
 * pending/in_progress/completed, at most one in_progress, ids generated when
 * missing (`todo-1`, `todo-2`, … skipping ids already given), priority
 * defaulting to medium. Models sometimes send the array as a JSON string; that
 * is accepted. The error text is in the prompt language.
 */
export function validateTodos(raw: unknown, language: PromptLanguage = 'en'): TodoValidation {
  const e = promptTexts(language).todoErrors;
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return { ok: false, error: e.notArray };
    }
  }
  if (!Array.isArray(value)) return { ok: false, error: e.notArray };
  if (value.length > TODO_MAX_ITEMS) return { ok: false, error: e.tooMany(TODO_MAX_ITEMS) };

  const drafts: Array<{ id: string | undefined; content: string; status: TodoStatus; priority: TodoPriority }> = [];
  for (const [i, item] of value.entries()) {
    if (!item || typeof item !== 'object' || Array.isArray(item)) return { ok: false, error: e.notObject(i) };
    const o = item as Record<string, unknown>;
    if (typeof o.content !== 'string' || o.content.trim() === '' || o.status === undefined || o.status === null) return { ok: false, error: e.required(i) };
    if (!isStatus(o.status)) return { ok: false, error: e.badStatus(i, o.status) };
    if (o.priority !== undefined && o.priority !== null && !isPriority(o.priority)) return { ok: false, error: e.badPriority(i, o.priority) };
    if (o.content.length > TODO_MAX_CONTENT_CHARS) return { ok: false, error: e.tooLong(i, TODO_MAX_CONTENT_CHARS) };
    let id: string | undefined;
    if (o.id !== undefined && o.id !== null) {
      if (typeof o.id === 'number' && Number.isFinite(o.id)) id = String(o.id);
      else if (typeof o.id === 'string' && o.id.trim() !== '') id = o.id.trim();
      else return { ok: false, error: e.badId(i) };
    }
    drafts.push({ id, content: o.content.trim(), status: o.status, priority: isPriority(o.priority) ? o.priority : 'medium' });
  }

  const inProgress = drafts.filter((d) => d.status === 'in_progress').length;
  if (inProgress > 1) return { ok: false, error: e.multipleInProgress(inProgress) };

  const taken = new Set<string>();
  for (const d of drafts) {
    if (d.id === undefined) continue;
    if (taken.has(d.id)) return { ok: false, error: e.duplicateId(d.id) };
    taken.add(d.id);
  }
  let next = 1;
  const todos = drafts.map((d) => {
    let id = d.id;
    if (id === undefined) {
      while (taken.has(`todo-${next}`)) next++;
      id = `todo-${next}`;
      taken.add(id);
    }
    return { id, content: d.content, status: d.status, priority: d.priority };
  });
  return { ok: true, todos };
}

/** Counts per status (the `summary` todo_read returns). */
export function todoSummary(todos: readonly TodoItem[]): { pending: number; in_progress: number; completed: number; total: number } {
  return {
    pending: todos.filter((t) => t.status === 'pending').length,
    in_progress: todos.filter((t) => t.status === 'in_progress').length,
    completed: todos.filter((t) => t.status === 'completed').length,
    total: todos.length,
  };
}
