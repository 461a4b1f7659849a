import { describe, expect, it } from 'vitest';
import { HumanMessage, AIMessage } from '@langchain/core/messages';
import { classifyMention, classifyMentions, mentionsOf, parseMentions, type MentionCatalog } from './mentions.js';

const catalog = (c: Partial<Record<keyof MentionCatalog, string[]>> = {}): MentionCatalog => ({
  tools: new Set(c.tools ?? []),
  skills: new Set(c.skills ?? []),
  agents: new Set(c.agents ?? ['general']),
});

describe('parseMentions', () => {
  it('extracts names with dashes and underscores, in order, without duplicates', () => {
    expect(parseMentions('use @read_file and @web-search, then @read_file again')).toEqual(['read_file', 'web-search']);
  });

  it('accepts non-ASCII names and ignores e-mail addresses', () => {
    expect(parseMentions('问 @助手 或 mail bob@example.com')).toEqual(['助手']);
  });

  it('reads the latest human message only', () => {
    expect(mentionsOf([new HumanMessage('@old'), new AIMessage('ok'), new HumanMessage('now @new')])).toEqual(['new']);
  });

  it('parses a message once, again when its text changed, and hands out copies', () => {
    const human = new HumanMessage('ask @pdf and @analyst');
    const first = mentionsOf([human]);
    expect(first).toEqual(['pdf', 'analyst']);
    first.push('mutated');
    expect(mentionsOf([human, new AIMessage('ok')])).toEqual(['pdf', 'analyst']);
    human.content = 'now @xlsx';
    expect(mentionsOf([human])).toEqual(['xlsx']);
  });
});

describe('classifyMention', () => {
  it('prefers a known tool over a skill and an agent of the same name', () => {
    expect(classifyMention('general', catalog({ tools: ['general'], skills: ['general'] }))).toBe('tool');
  });

  it('prefers a known skill over an agent', () => {
    expect(classifyMention('general', catalog({ skills: ['general'] }))).toBe('skill');
  });

  it('recognises configured agent names case-insensitively and agent keywords', () => {
    expect(classifyMention('General', catalog())).toBe('agent');
    expect(classifyMention('research-agent', catalog())).toBe('agent');
    expect(classifyMention('代理', catalog({ agents: [] }))).toBe('agent');
  });

  it('treats an unknown name as a tool', () => {
    expect(classifyMention('@mystery', catalog())).toBe('tool');
  });

  it('groups several mentions by kind', () => {
    expect(classifyMentions(['find_files', 'pdf', 'general', 'x'], catalog({ tools: ['find_files'], skills: ['pdf'] }))).toEqual({
      tools: ['find_files', 'x'],
      skills: ['pdf'],
      agents: ['general'],
    });
  });
});
