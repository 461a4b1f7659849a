import { describe, expect, it } from 'vitest';
import { buildSystemPrompt, BASE_SYSTEM_PROMPT_ZH, mentionReminders, todoReminder } from './prompts.js';

const todos = [
  { content: 'Write the parser', status: 'in_progress', priority: 'high' },
  { content: 'Add tests', status: 'pending', priority: 'medium' },
  { content: 'Read the spec', status: 'completed', priority: 'medium' },
];

describe('todoReminder', () => {
  it('lists in-progress then pending tasks in English, tagging non-medium priority', () => {
    expect(todoReminder(todos, 'en')).toBe(
      [
        '<system_reminder>',
        '⚠️ Task tracking (2 incomplete):',
        '  [in progress] Write the parser [high]',
        '  [pending] Add tests',
        '(1 completed)',
        '',
        'Keep working until every task is completed. Use todo_write to update task status.',
        '</system_reminder>',
      ].join('\n'),
    );
  });

  it('uses the seed wording in Chinese', () => {
    expect(todoReminder(todos, 'zh')).toBe(
      [
        '<system_reminder>',
        '⚠️ 任务追踪 (2 个未完成):',
        '  [进行中] Write the parser [high]',
        '  [待完成] Add tests',
        '（已完成 1 个）',
        '',
        '请继续完成所有待完成任务。使用 todo_write 更新任务状态。',
        '</system_reminder>',
      ].join('\n'),
    );
  });

  it('is empty when every task is completed', () => {
    expect(todoReminder([{ content: 'x', status: 'completed' }])).toBe('');
    expect(todoReminder([])).toBe('');
  });
});

describe('mentionReminders', () => {
  const m = { tools: ['find_files', 'read_file'], skills: ['pdf'], agents: ['general'] };

  it('writes one reminder per mention kind in English', () => {
    const text = mentionReminders(m, 'en');
    expect(text).toBe(
      [
        '<system_reminder>The user mentioned the tool(s): find_files, read_file. Prefer these tools to complete the task.</system_reminder>',
        '<system_reminder>The user mentioned the skill(s): pdf. First read the matching SKILL.md with the read_file tool (skills/pdf/SKILL.md), then follow its instructions.</system_reminder>',
        '<system_reminder>The user mentioned the agent(s): general. You can use the delegate_task tool to hand a subtask to a delegated agent.</system_reminder>',
      ].join('\n\n'),
    );
  });

  it('writes the Chinese reminders with the 、 separator', () => {
    const text = mentionReminders(m, 'zh');
    expect(text).toContain('<system_reminder>用户提到了工具：find_files、read_file。请优先使用这些工具完成任务。</system_reminder>');
    expect(text).toContain('用户提到了技能：pdf。请先使用 read_file 工具读取对应的 SKILL.md 文件（路径为 skills/pdf/SKILL.md），然后根据文档指导执行操作。');
    expect(text).toContain('<system_reminder>用户提到了代理：general。你可以使用 delegate_task 工具将任务委派给子代理执行。</system_reminder>');
  });

  it('is empty without mentions', () => {
    expect(mentionReminders({ tools: [], skills: [], agents: [] })).toBe('');
  });
});

describe('buildSystemPrompt', () => {
  it('uses the Chinese base prompt for zh and appends extra sections with the separator', () => {
    const p = buildSystemPrompt({ language: 'zh', now: new Date('2025-01-24T15:30:45Z'), extra: ['X'] });
    expect(p).toBe(`${BASE_SYSTEM_PROMPT_ZH}\n\n---\n\n<current_datetime>2025-01-24 15:30:45 UTC</current_datetime>\n\n---\n\nX`);
  });
});
