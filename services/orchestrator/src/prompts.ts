/**
 * Prompt text, in English and Chinese (`PROMPT_LANGUAGE=en|zh`). The system
 * prompt is rebuilt on every model call and never stored in history
 * (seed 000 §4.2, seed 001 §4.4); reminders are `<system_reminder>` sections
 * appended to it (seed 000 §4.2.1, seed 001 §2.6).
 */
import { TextInterner } from './text-interner.js';

export const PROMPT_LANGUAGES = ['en', 'zh'] as const;
export type PromptLanguage = (typeof PROMPT_LANGUAGES)[number];

/** Base system prompt (English). */
export const BASE_SYSTEM_PROMPT = [
  'You are AgentLoop, a capable and careful assistant that completes tasks by calling tools.',
  'Work in a loop: decide on the next step, call tools when they help, read their results, and answer when the task is done.',
  'Files live in your workspace; refer to them by workspace-relative paths (uploads/, outputs/, temp/, skills/).',
  'Write deliverables to outputs/. When a tool returns a message starting with "Error:", read it and adjust your approach instead of repeating the same call.',
  'When you are finished, reply with your final answer and no tool calls.',
].join('\n');

/** Base system prompt (Chinese). */
export const BASE_SYSTEM_PROMPT_ZH = [
  '你是 AgentLoop，一个通过调用工具完成任务、能干而细心的助手。',
  '以循环方式工作：决定下一步，在有帮助时调用工具，阅读工具结果，任务完成后给出答复。',
  '文件位于你的工作区；请用相对于工作区的路径引用它们（uploads/、outputs/、temp/、skills/）。',
  '把交付物写入 outputs/。当工具返回以 "Error:" 开头的消息时，请阅读它并调整做法，不要重复同样的调用。',
  '完成后，直接给出最终答复，不再调用工具。',
].join('\n');

/**
 * System prompt of a delegated agent (seed 001 §5.4), English: task execution,
 * not dialogue; it cannot ask the user; it shares the parent's workspace.
 */
export const DELEGATED_AGENT_SYSTEM_PROMPT = [
  'You are a task executor (a delegated agent): you complete one specific task delegated to you by the main agent.',
  '',
  'Core principles:',
  '- Goal-oriented: accomplish only the concrete goal stated in the task',
  '- Act directly: start using tools as soon as you receive the task; no greetings, confirmations or explanations',
  '- Return results: give concrete data or analysis, not conversation',
  '',
  'Workflow:',
  '1. Understand the goal of the task',
  '2. Use tools when you need external information or actions, or answer directly when you can',
  '3. Return the result and stop immediately',
  '',
  'Output requirements:',
  '- ✅ "Query result: Beijing is sunny today, 15-25°C"',
  '- ✅ "Code analysis: the function is defined in src/auth.py:42"',
  '- ❌ "Sure, let me look up the weather for you" (no pleasantries)',
  '- ❌ "Let me first understand what you need" (no stalling)',
  '',
  'Restrictions:',
  '- You cannot ask the user anything (there is no dialogue)',
  "- You share the main agent's workspace (uploads/, outputs/, temp/, skills/); write deliverables to outputs/",
  '',
  'Skills:',
  "- Read a skill's guide with the read_file tool at `skills/{skill_id}/SKILL.md`",
  '- Follow its instructions to do the work',
  '- Skills are not tools but knowledge packages (documents)',
].join('\n');

/** System prompt of a delegated agent (seed 001 §5.4), Chinese. */
export const DELEGATED_AGENT_SYSTEM_PROMPT_ZH = [
  '你是任务执行器（Delegated agent），负责完成主 Agent 委托的具体任务。',
  '',
  '核心原则：',
  '- 目标导向：只完成任务描述中的具体目标',
  '- 直接执行：收到任务后立即使用工具完成，无需寒暄、确认或解释',
  '- 返回结果：提供具体数据/分析，而不是对话',
  '',
  '工作流程：',
  '1. 理解任务目标',
  '2. 使用工具执行（如需外部信息/操作）或直接返回结果（如可直接回答）',
  '3. 返回结果后立即停止',
  '',
  '输出要求：',
  '- ✅ "查询结果：北京今天晴天，15-25°C"',
  '- ✅ "代码分析：该函数在 src/auth.py:42 定义"',
  '- ❌ "好的，我来帮您查询天气"（禁止寒暄）',
  '- ❌ "让我先了解一下您的需求"（禁止拖延）',
  '',
  '限制：',
  '- 不能询问用户（无法对话）',
  '- 你与主 Agent 共享工作区（uploads/、outputs/、temp/、skills/）；把交付物写入 outputs/',
  '',
  '技能系统（Skills）：',
  '- 使用 read_file 工具读取该技能的 `skills/{skill_id}/SKILL.md` 文件获取详细指导',
  '- 根据指导执行相关操作',
  '- Skills 不是 tools，而是知识包（文档）',
].join('\n');

/** The base system prompt of a top-level run or of a delegated agent, in a language. */
export function basePrompt(language: PromptLanguage = 'en', delegated = false): string {
  if (delegated) return language === 'zh' ? DELEGATED_AGENT_SYSTEM_PROMPT_ZH : DELEGATED_AGENT_SYSTEM_PROMPT;
  return language === 'zh' ? BASE_SYSTEM_PROMPT_ZH : BASE_SYSTEM_PROMPT;
}

/** Separator between system prompt sections (seed 001 §2.6). */
export const SECTION_SEPARATOR = '\n\n---\n\n';

/** `<current_datetime>YYYY-MM-DD HH:MM:SS UTC</current_datetime>` (seed 000 §4.2.2). */
export function currentDatetimeTag(now: Date = new Date()): string {
  const iso = now.toISOString(); // 2025-01-24T15:30:45.123Z
  return `<current_datetime>${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC</current_datetime>`;
}

/** The prompts built lately, one instance each (a waiting run holds two; text-interner.ts). */
const recentPrompts = new TextInterner(64);

/** Joins the prompt parts with the seed's separator; empty parts are dropped. */
export function buildSystemPrompt(parts: { base?: string; now?: Date; extra?: string[]; language?: PromptLanguage } = {}): string {
  const base = parts.base ?? (parts.language === 'zh' ? BASE_SYSTEM_PROMPT_ZH : BASE_SYSTEM_PROMPT);
  const sections = [base, currentDatetimeTag(parts.now), ...(parts.extra ?? [])].filter((s) => s.length > 0);
  return recentPrompts.intern(sections.join(SECTION_SEPARATOR));
}

/** A todo item as the reminder needs it. */
export interface ReminderTodo {
  content: string;
  status: string;
  priority?: string;
}

/** Every text the orchestrator shows the model or the user, per language. */
export interface PromptTexts {
  loopLimit(maxLoops: number): string;
  repeatedCall(toolName: string): string;
  todoReminder(inProgress: ReminderTodo[], pending: ReminderTodo[], completed: number): string;
  mentionedTools(names: string[]): string;
  mentionedSkills(names: string[]): string;
  mentionedAgents(names: string[]): string;
  todoUpdated(counts: { inProgress: number; pending: number; completed: number }): string;
  todoInvalid(detail: string): string;
  todoErrors: {
    notArray: string;
    tooMany(max: number): string;
    notObject(i: number): string;
    required(i: number): string;
    badStatus(i: number, got: unknown): string;
    badPriority(i: number, got: unknown): string;
    tooLong(i: number, max: number): string;
    badId(i: number): string;
    duplicateId(id: string): string;
    multipleInProgress(n: number): string;
  };
  delegateUnavailable: string;
  delegateInvalid(detail: string): string;
  delegateDepth(maxDepth: number): string;
  delegateTooMany(max: number): string;
  delegateFailed(detail: string): string;
  delegateEmptyAnswer: string;
  delegateErrors: {
    taskRequired: string;
    taskTooLong(max: number): string;
    badMaxLoops(min: number, max: number, got: unknown): string;
  };
  /** Tool approval (seed 001 Part 7): the only trace of a decision the model sees is the cancel message. */
  approval: {
    rejected(reason: string, comment: string): string;
    denied(tool: string, reason: string): string;
    unavailable(tool: string, detail: string): string;
    notRecorded(tool: string): string;
    subagent(tool: string, reason: string): string;
    badAnswer: string;
    sharedId(tool: string, id: string): string;
  };
  askHuman: {
    subagent: string;
    invalid(detail: string): string;
    noAnswer: string;
  };
  elicitation: {
    /** A delegated agent's (or stateless run's) MCP call needed the user's input, which nobody can give it. */
    unanswerable(tool: string, server: string, message: string): string;
    badAnswer: string;
  };
  summarySection(summary: string): string;
  summarizerSystem: string;
  summarizerRequest(transcript: string): string;
  compacted(count: number): string;
  nothingToCompact: string;
}

const tag = (p: string | undefined) => (p && p !== 'medium' ? ` [${p}]` : '');
const list = (names: string[], sep: string) => names.join(sep);

const EN: PromptTexts = {
  loopLimit: (maxLoops) =>
    `I stopped before finishing: this run reached its limit of ${maxLoops} agent steps (max_loops). ` +
    'The work done so far is in the conversation above and in the workspace. ' +
    'Send a follow-up message to continue, or start a run with a higher max_loops (up to 500).',
  repeatedCall: (toolName) =>
    `I stopped because I called the tool "${toolName}" with the same arguments three times in a row without making progress. ` +
    'The results so far are above. Please clarify the task or give me more information so I can take a different approach.',
  todoReminder: (inProgress, pending, completed) =>
    [
      '<system_reminder>',
      `⚠️ Task tracking (${inProgress.length + pending.length} incomplete):`,
      ...inProgress.map((t) => `  [in progress] ${t.content}${tag(t.priority)}`),
      ...pending.map((t) => `  [pending] ${t.content}${tag(t.priority)}`),
      ...(completed > 0 ? [`(${completed} completed)`] : []),
      '',
      'Keep working until every task is completed. Use todo_write to update task status.',
      '</system_reminder>',
    ].join('\n'),
  mentionedTools: (names) =>
    `<system_reminder>The user mentioned the tool(s): ${list(names, ', ')}. Prefer these tools to complete the task.</system_reminder>`,
  mentionedSkills: (names) =>
    `<system_reminder>The user mentioned the skill(s): ${list(names, ', ')}. ` +
    `First read the matching SKILL.md with the read_file tool (${names.map((n) => `skills/${n}/SKILL.md`).join(', ')}), then follow its instructions.</system_reminder>`,
  mentionedAgents: (names) =>
    `<system_reminder>The user mentioned the agent(s): ${list(names, ', ')}. You can use the delegate_task tool to hand a subtask to a delegated agent.</system_reminder>`,
  todoUpdated: ({ inProgress, pending, completed }) =>
    `TODO list updated: ${inProgress + pending} incomplete (${inProgress} in progress, ${pending} pending), ${completed} completed.`,
  todoInvalid: (detail) => `Error: the TODO list was not updated: ${detail}`,
  todoErrors: {
    notArray: '"todos" must be an array of tasks',
    tooMany: (max) => `at most ${max} tasks are allowed`,
    notObject: (i) => `todos[${i}] must be an object`,
    required: (i) => `todos[${i}]: every task must have 'content' and 'status' fields`,
    badStatus: (i, got) => `todos[${i}].status must be pending, in_progress or completed, got ${JSON.stringify(got)}`,
    badPriority: (i, got) => `todos[${i}].priority must be high, medium or low, got ${JSON.stringify(got)}`,
    tooLong: (i, max) => `todos[${i}].content is longer than ${max} characters`,
    badId: (i) => `todos[${i}].id must be a non-empty string`,
    duplicateId: (id) => `task id ${JSON.stringify(id)} is used twice`,
    multipleInProgress: (n) => `only one task can be 'in_progress' at a time, found ${n}`,
  },
  delegateUnavailable:
    'Error: delegate_task is not available yet: delegated agents are not supported by this deployment. Do the subtask yourself with the other tools.',
  delegateInvalid: (detail) => `Error: the subtask was not delegated: ${detail}`,
  delegateDepth: (maxDepth) =>
    `Error: delegate_task is not available here: delegated agents may be nested at most ${maxDepth} level(s) deep (DELEGATION_MAX_DEPTH). Do the subtask yourself with the other tools.`,
  delegateTooMany: (max) =>
    `Error: the subtask was not delegated: at most ${max} delegate_task calls may run in one step (DELEGATION_MAX_PARALLEL); call it again in a later step.`,
  delegateFailed: (detail) => `Error: delegated task failed: ${detail}`,
  delegateEmptyAnswer: '(the delegated agent finished without a final answer)',
  delegateErrors: {
    taskRequired: '"task" must be a non-empty string describing the subtask',
    taskTooLong: (max) => `"task" is longer than ${max} characters`,
    badMaxLoops: (min, max, got) => `"max_loops" must be an integer between ${min} and ${max}, got ${JSON.stringify(got)}`,
  },
  approval: {
    rejected: (reason, comment) =>
      `Operation cancelled by the user: ${reason}${comment ? ` (${comment})` : ''}. Do not retry it; continue another way or ask the user.`,
    denied: (tool, reason) => `Error: ${tool} was not run: the approval policy denies it (${reason}).`,
    unavailable: (tool, detail) => `Error: ${tool} was not run: no approval decision could be obtained (${detail}).`,
    notRecorded: (tool) => `Error: ${tool} was not run: the approval could not be recorded in the audit trail; ask the user to approve it again later.`,
    subagent: (tool, reason) =>
      `Error: ${tool} was not run: it needs a human's approval (${reason}), which a delegated agent cannot ask for. Report this back instead.`,
    badAnswer:
      'Unrecognized answer: reply "approve" or "reject" (or {"decision": "approve" | "reject", "comment": "..."}, or {"decisions": [{"type": "approve" | "edit" | "reject", ...}]}).',
    sharedId: (tool, id) =>
      `Error: ${tool} was not run: its tool call id ${JSON.stringify(id)} is used by another call of the same message. Give every tool call its own id and call again.`,
  },
  askHuman: {
    subagent: 'Error: ask_human is not available to delegated agents: report what is missing in your final answer instead.',
    invalid: (detail) => `Error: invalid ask_human call: ${detail}`,
    noAnswer: '(the user gave no answer)',
  },
  elicitation: {
    unanswerable: (tool, server, message) =>
      `Error: ${tool} needs the user's input (MCP server ${server} asked: ${JSON.stringify(message)}), and a delegated agent or a stateless run cannot ask the user: report what is needed in your final answer instead.`,
    badAnswer:
      'Unrecognized answer: resume with {"action": "accept", "content": {...}} (the fields of requested_schema), {"action": "decline"} or {"action": "cancel"}.',
  },
  summarySection: (summary) =>
    `<conversation_summary>\nSummary of the earlier conversation (older messages were compacted):\n${summary}\n</conversation_summary>`,
  summarizerSystem:
    'You summarize a conversation between a user and an AI assistant that works with tools. ' +
    "Write a concise summary that lets the assistant continue without the original messages: the user's goals and requests, " +
    'decisions taken, important facts and results (file paths, names, numbers), tool calls that mattered and their outcomes, ' +
    'and open tasks or next steps. Do not invent anything. Reply with the summary only.',
  summarizerRequest: (transcript) => `Summarize this conversation:\n\n<transcript>\n${transcript}\n</transcript>`,
  compacted: (count) => `Conversation compacted: ${count} earlier message(s) were summarized into one.`,
  nothingToCompact: 'Nothing to compact yet: the conversation has no earlier messages.',
};

const ZH: PromptTexts = {
  loopLimit: (maxLoops) =>
    `我在完成之前停止了：本次运行达到了 ${maxLoops} 个代理步骤的上限（max_loops）。` +
    '目前的进展在上面的对话和工作区中。' +
    '发送后续消息即可继续，或以更高的 max_loops（最多 500）重新运行。',
  repeatedCall: (toolName) =>
    `我停止了，因为我连续三次以相同参数调用了工具 "${toolName}" 而没有进展。` + '目前的结果在上面。请澄清任务或提供更多信息，以便我换一种方法。',
  todoReminder: (inProgress, pending, completed) =>
    [
      '<system_reminder>',
      `⚠️ 任务追踪 (${inProgress.length + pending.length} 个未完成):`,
      ...inProgress.map((t) => `  [进行中] ${t.content}${tag(t.priority)}`),
      ...pending.map((t) => `  [待完成] ${t.content}${tag(t.priority)}`),
      ...(completed > 0 ? [`（已完成 ${completed} 个）`] : []),
      '',
      '请继续完成所有待完成任务。使用 todo_write 更新任务状态。',
      '</system_reminder>',
    ].join('\n'),
  mentionedTools: (names) => `<system_reminder>用户提到了工具：${list(names, '、')}。请优先使用这些工具完成任务。</system_reminder>`,
  mentionedSkills: (names) =>
    `<system_reminder>用户提到了技能：${list(names, '、')}。` +
    `请先使用 read_file 工具读取对应的 SKILL.md 文件（路径为 ${names.map((n) => `skills/${n}/SKILL.md`).join('、')}），然后根据文档指导执行操作。</system_reminder>`,
  mentionedAgents: (names) => `<system_reminder>用户提到了代理：${list(names, '、')}。你可以使用 delegate_task 工具将任务委派给子代理执行。</system_reminder>`,
  todoUpdated: ({ inProgress, pending, completed }) =>
    `✅ TODO 列表已更新：${inProgress + pending} 个待完成（${inProgress} 个进行中，${pending} 个待开始），${completed} 个已完成。`,
  todoInvalid: (detail) => `Error: TODO 列表未更新：${detail}`,
  todoErrors: {
    notArray: '"todos" 必须是任务数组',
    tooMany: (max) => `最多允许 ${max} 个任务`,
    notObject: (i) => `todos[${i}] 必须是对象`,
    required: (i) => `todos[${i}]：每个任务必须包含 'content' 和 'status' 字段`,
    badStatus: (i, got) => `todos[${i}].status 必须是 pending、in_progress 或 completed，收到 ${JSON.stringify(got)}`,
    badPriority: (i, got) => `todos[${i}].priority 必须是 high、medium 或 low，收到 ${JSON.stringify(got)}`,
    tooLong: (i, max) => `todos[${i}].content 超过 ${max} 个字符`,
    badId: (i) => `todos[${i}].id 必须是非空字符串`,
    duplicateId: (id) => `任务 id ${JSON.stringify(id)} 重复使用`,
    multipleInProgress: (n) => `只能有一个任务处于 'in_progress' 状态，当前有 ${n} 个`,
  },
  delegateUnavailable: 'Error: delegate_task 暂不可用：当前部署尚不支持子代理。请使用其他工具自行完成该子任务。',
  delegateInvalid: (detail) => `Error: 子任务未委派：${detail}`,
  delegateDepth: (maxDepth) => `Error: 此处不能使用 delegate_task：子代理最多只能嵌套 ${maxDepth} 层（DELEGATION_MAX_DEPTH）。请使用其他工具自行完成该子任务。`,
  delegateTooMany: (max) => `Error: 子任务未委派：一个步骤中最多只能执行 ${max} 个 delegate_task 调用（DELEGATION_MAX_PARALLEL）；请在后续步骤中再次调用。`,
  delegateFailed: (detail) => `Error: 委派任务失败（delegated task failed）：${detail}`,
  delegateEmptyAnswer: '（子代理已结束，但没有给出最终答复）',
  delegateErrors: {
    taskRequired: '"task" 必须是描述子任务的非空字符串',
    taskTooLong: (max) => `"task" 超过 ${max} 个字符`,
    badMaxLoops: (min, max, got) => `"max_loops" 必须是 ${min} 到 ${max} 之间的整数，收到 ${JSON.stringify(got)}`,
  },
  approval: {
    rejected: (reason, comment) => `操作已取消（用户拒绝）：${reason}${comment ? `（${comment}）` : ''}。请不要重试，换一种方式继续或询问用户。`,
    denied: (tool, reason) => `Error: ${tool} 未执行：审批策略禁止该操作（${reason}）。`,
    unavailable: (tool, detail) => `Error: ${tool} 未执行：无法获得审批结果（${detail}）。`,
    notRecorded: (tool) => `Error: ${tool} 未执行：审批结果无法写入审计记录；请稍后让用户重新批准。`,
    subagent: (tool, reason) => `Error: ${tool} 未执行：该操作需要人工审批（${reason}），子代理无法请求审批。请在最终答复中说明。`,
    badAnswer: '无法识别的答复：请回复 "approve"（批准）或 "reject"（拒绝），或 {"decisions": [{"type": "approve" | "edit" | "reject"}]}。',
    sharedId: (tool, id) => `Error: ${tool} 未执行：同一条消息中另一个工具调用也使用了 ID ${JSON.stringify(id)}。请为每个工具调用使用不同的 ID 后重试。`,
  },
  askHuman: {
    subagent: 'Error: 子代理不能使用 ask_human：请在最终答复中说明缺少的信息。',
    invalid: (detail) => `Error: ask_human 调用无效：${detail}`,
    noAnswer: '（用户没有回答）',
  },
  elicitation: {
    unanswerable: (tool, server, message) =>
      `Error: ${tool} 需要用户输入（MCP 服务器 ${server} 询问：${JSON.stringify(message)}），子代理或无状态运行无法询问用户：请在最终答复中说明需要的信息。`,
    badAnswer: '无法识别的答复：请以 {"action": "accept", "content": {...}}（requested_schema 的字段）、{"action": "decline"} 或 {"action": "cancel"} 恢复。',
  },
  summarySection: (summary) => `<conversation_summary>\n之前对话的摘要（较早的消息已被压缩）：\n${summary}\n</conversation_summary>`,
  summarizerSystem:
    '你负责总结用户与一个使用工具的 AI 助手之间的对话。' +
    '写一份简洁的摘要，使助手无需原始消息即可继续工作：用户的目标和请求、已做出的决定、重要的事实和结果（文件路径、名称、数字）、' +
    '关键的工具调用及其结果，以及未完成的任务或下一步。不要编造任何内容。只回复摘要本身。',
  summarizerRequest: (transcript) => `请总结以下对话：\n\n<transcript>\n${transcript}\n</transcript>`,
  compacted: (count) => `对话已压缩：${count} 条较早的消息已合并为一条摘要。`,
  nothingToCompact: '暂无可压缩的内容：对话中还没有较早的消息。',
};

const TEXTS: Record<PromptLanguage, PromptTexts> = { en: EN, zh: ZH };

/** The prompt texts of a language. */
export function promptTexts(language: PromptLanguage = 'en'): PromptTexts {
  return TEXTS[language];
}

export function loopLimitMessage(maxLoops: number, language: PromptLanguage = 'en'): string {
  return TEXTS[language].loopLimit(maxLoops);
}

export function repeatedCallMessage(toolName: string, language: PromptLanguage = 'en'): string {
  return TEXTS[language].repeatedCall(toolName);
}

/**
 * The reminder of incomplete tasks (seed 000 §2.7), or "" when every task is
 * completed or there are none. In-progress tasks first, then pending ones;
 * a non-medium priority is shown as a tag.
 */
export function todoReminder(todos: readonly ReminderTodo[], language: PromptLanguage = 'en'): string {
  const inProgress = todos.filter((t) => t.status === 'in_progress');
  const pending = todos.filter((t) => t.status === 'pending');
  if (inProgress.length + pending.length === 0) return '';
  const completed = todos.filter((t) => t.status === 'completed').length;
  return TEXTS[language].todoReminder(inProgress, pending, completed);
}

/** Mention reminders (seed 001 §2.6): tools, skills, agents; joined by a blank line, "" when none. */
export function mentionReminders(m: { tools: string[]; skills: string[]; agents: string[] }, language: PromptLanguage = 'en'): string {
  const t = TEXTS[language];
  const parts: string[] = [];
  if (m.tools.length > 0) parts.push(t.mentionedTools(m.tools));
  if (m.skills.length > 0) parts.push(t.mentionedSkills(m.skills));
  if (m.agents.length > 0) parts.push(t.mentionedAgents(m.agents));
  return parts.join('\n\n');
}
