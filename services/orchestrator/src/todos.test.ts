import { describe, expect, it } from 'vitest';
import { TODO_MAX_ITEMS, todoSummary, validateTodos } from './todos.js';

const ok = (raw: unknown) => {
  const v = validateTodos(raw);
  if (!v.ok) throw new Error(`expected valid, got: ${v.error}`);
  return v.todos;
};
const err = (raw: unknown, lang: 'en' | 'zh' = 'en') => {
  const v = validateTodos(raw, lang);
  if (v.ok) throw new Error('expected a validation error');
  return v.error;
};

describe('validateTodos', () => {
  it('accepts a valid list and defaults priority to medium', () => {
    const todos = ok([
      { content: 'a', status: 'pending' },
      { content: 'b', status: 'completed', priority: 'high' },
    ]);
    expect(todos.map((t) => t.priority)).toEqual(['medium', 'high']);
  });

  it('requires content and status on every task', () => {
    expect(err([{ status: 'pending' }])).toContain("todos[0]: every task must have 'content' and 'status'");
    expect(err([{ content: 'a', status: 'pending' }, { content: 'b' }])).toContain('todos[1]');
    expect(err([{ content: '   ', status: 'pending' }])).toContain("'content' and 'status'");
  });

  it('rejects a status outside pending, in_progress and completed', () => {
    expect(err([{ content: 'a', status: 'done' }])).toBe('todos[0].status must be pending, in_progress or completed, got "done"');
  });

  it('rejects an unknown priority', () => {
    expect(err([{ content: 'a', status: 'pending', priority: 'urgent' }])).toContain('priority must be high, medium or low');
  });

  it('allows at most one task in progress', () => {
    expect(
      err([
        { content: 'a', status: 'in_progress' },
        { content: 'b', status: 'in_progress' },
      ]),
    ).toBe("only one task can be 'in_progress' at a time, found 2");
    expect(
      ok([
        { content: 'a', status: 'in_progress' },
        { content: 'b', status: 'pending' },
      ]),
    ).toHaveLength(2);
  });

  it('generates ids for tasks without one, skipping ids already given', () => {
    const todos = ok([
      { content: 'a', status: 'pending' },
      { content: 'b', status: 'pending', id: 'todo-1' },
      { content: 'c', status: 'pending' },
    ]);
    expect(todos.map((t) => t.id)).toEqual(['todo-2', 'todo-1', 'todo-3']);
  });

  it('rejects the same id used twice', () => {
    expect(
      err([
        { content: 'a', status: 'pending', id: 'x' },
        { content: 'b', status: 'pending', id: 'x' },
      ]),
    ).toContain('"x" is used twice');
  });

  it('accepts the list sent as a JSON string', () => {
    expect(ok(JSON.stringify([{ content: 'a', status: 'pending' }]))[0]!.content).toBe('a');
  });

  it('rejects a non-array and a list over the item limit', () => {
    expect(err({ content: 'a' })).toBe('"todos" must be an array of tasks');
    expect(err(Array.from({ length: TODO_MAX_ITEMS + 1 }, () => ({ content: 'a', status: 'pending' })))).toBe(`at most ${TODO_MAX_ITEMS} tasks are allowed`);
  });

  it('words its errors in Chinese when the prompt language is zh', () => {
    expect(
      err(
        [
          { content: 'a', status: 'in_progress' },
          { content: 'b', status: 'in_progress' },
        ],
        'zh',
      ),
    ).toBe("只能有一个任务处于 'in_progress' 状态，当前有 2 个");
    expect(err([{ status: 'pending' }], 'zh')).toBe("todos[0]：每个任务必须包含 'content' 和 'status' 字段");
  });
});

describe('todoSummary', () => {
  it('counts tasks per status', () => {
    const todos = ok([
      { content: 'a', status: 'pending' },
      { content: 'b', status: 'in_progress' },
      { content: 'c', status: 'completed' },
      { content: 'd', status: 'completed' },
    ]);
    expect(todoSummary(todos)).toEqual({ pending: 1, in_progress: 1, completed: 2, total: 4 });
  });
});
