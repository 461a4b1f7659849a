/** Base system prompt. Rebuilt on every model call and never stored in history (seed 000 §4.2). */
export const BASE_SYSTEM_PROMPT = [
  'You are AgentLoop, a capable and careful assistant that completes tasks by calling tools.',
  'Work in a loop: decide on the next step, call tools when they help, read their results, and answer when the task is done.',
  'Files live in your workspace; refer to them by workspace-relative paths (uploads/, outputs/, temp/, skills/).',
  'Write deliverables to outputs/. When a tool returns a message starting with "Error:", read it and adjust your approach instead of repeating the same call.',
  'When you are finished, reply with your final answer and no tool calls.',
].join('\n');

/** `<current_datetime>YYYY-MM-DD HH:MM:SS UTC</current_datetime>` (seed 000 §4.2.2). */
export function currentDatetimeTag(now: Date = new Date()): string {
  const iso = now.toISOString(); // 2025-01-24T15:30:45.123Z
  return `<current_datetime>${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC</current_datetime>`;
}

/** Joins the prompt parts with the seed's separator. */
export function buildSystemPrompt(parts: { base?: string; now?: Date; extra?: string[] } = {}): string {
  const sections = [parts.base ?? BASE_SYSTEM_PROMPT, currentDatetimeTag(parts.now), ...(parts.extra ?? [])].filter((s) => s.length > 0);
  return sections.join('\n\n---\n\n');
}

export function loopLimitMessage(maxLoops: number): string {
  return (
    `I stopped before finishing: this run reached its limit of ${maxLoops} agent steps (max_loops). ` +
    'The work done so far is in the conversation above and in the workspace. ' +
    'Send a follow-up message to continue, or start a run with a higher max_loops (up to 500).'
  );
}

export function repeatedCallMessage(toolName: string): string {
  return (
    `I stopped because I called the tool "${toolName}" with the same arguments three times in a row without making progress. ` +
    'The results so far are above. Please clarify the task or give me more information so I can take a different approach.'
  );
}
