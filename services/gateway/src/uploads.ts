import path from 'node:path';
import type { UploadRecord } from '@agentloop/store';
import type { SkillsConfig } from './skills-config.js';
import { COMPACT_COMMAND } from '@agentloop/orchestrator';

export type ReferenceLanguage = 'en' | 'zh';

const HEADINGS: Record<ReferenceLanguage, string> = { en: 'Uploaded files:', zh: '上传的文件：' };
const HINT: Record<ReferenceLanguage, (mentions: string) => string> = {
  en: (m) => ` [use ${m}]`,
  zh: (m) => ` [可用 ${m} 处理]`,
};
const WARNING: Record<ReferenceLanguage, string> = { en: 'warning', zh: '注意' };

/**
 * The block appended to the user's message (seed 001 §3.3), one line per file:
 * `- report.pdf → uploads/report.pdf (pdf, 245678 bytes) [use @pdf]`, with the
 * skill hints of seed 000 §3.3 and a warning when the name and the content
 * disagree. A file uploaded twice under one name is listed once (the latest).
 */
export function formatUploadReferences(uploads: readonly UploadRecord[], skills: SkillsConfig, language: ReferenceLanguage): string {
  const latest = new Map<string, UploadRecord>();
  for (const u of uploads) {
    latest.delete(u.path);
    latest.set(u.path, u);
  }
  const lines = [...latest.values()].map((u) => {
    const mentions = skills.skillsForExtension(path.extname(u.name)).map((s) => `@${s}`);
    const hint = mentions.length > 0 ? HINT[language](mentions.join(', ')) : '';
    const warning = u.mismatch ? `; ${WARNING[language]}: ${u.mismatch}` : '';
    return `- ${u.name} → ${u.path} (${u.type}, ${u.size} bytes${warning})${hint}`;
  });
  return `${HEADINGS[language]}\n${lines.join('\n')}`;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where a message keeps its text: itself (`{role|type, content}`) or its LangChain-serialized kwargs. */
function messageBody(msg: unknown): Json | undefined {
  if (!isObject(msg)) return undefined;
  if (msg.lc === 1 && msg.type === 'constructor' && Array.isArray(msg.id) && isObject(msg.kwargs)) {
    return msg.id[msg.id.length - 1] === 'HumanMessage' ? msg.kwargs : undefined;
  }
  const role = msg.role ?? msg.type;
  return role === 'user' || role === 'human' ? msg : undefined;
}

/** Whether a run input carries a user message the references can be added to. */
export function hasUserMessage(input: unknown): boolean {
  return isObject(input) && Array.isArray(input.messages) && input.messages.some((m) => messageBody(m) !== undefined);
}

/**
 * Whether the run input's last user message is the `/compact` command (seed 003): such a run only
 * compacts the conversation, so it claims no uploads — they wait for the next real message, whose
 * text they are appended to (appended to `/compact`, they would make it an ordinary message).
 */
export function isCompactRequest(input: unknown): boolean {
  if (!isObject(input) || !Array.isArray(input.messages)) return false;
  const last = [...(input.messages as unknown[])]
    .reverse()
    .map(messageBody)
    .find((b) => b !== undefined);
  if (!isObject(last)) return false;
  const content = last.content;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('')
        : '';
  return text.trim() === COMPACT_COMMAND;
}

/**
 * A copy of the run input whose last user message ends with `block`
 * (separated by a blank line). String content gets the text appended;
 * content-part arrays get a text part. Returns the input unchanged when it has
 * no user message.
 */
export function appendToLastUserMessage(input: unknown, block: string): unknown {
  if (!isObject(input) || !Array.isArray(input.messages)) return input;
  const messages = [...(input.messages as unknown[])];
  for (let i = messages.length - 1; i >= 0; i--) {
    const original = messages[i];
    const body = messageBody(original);
    if (!body || !isObject(original)) continue;
    const content = body.content;
    let next: unknown;
    if (typeof content === 'string') next = content === '' ? block : `${content}\n\n${block}`;
    else if (Array.isArray(content)) next = [...(content as unknown[]), { type: 'text', text: block }];
    else next = block;
    messages[i] = body === original ? { ...original, content: next } : { ...original, kwargs: { ...body, content: next } };
    return { ...input, messages };
  }
  return input;
}
