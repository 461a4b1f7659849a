import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { errorMessage } from '@agentloop/core';
import { SkillDocError } from './errors.js';

/**
 * SKILL.md frontmatter (seed 002 §3.2). Other keys (license, metadata, ...) are ignored: skills are
 * knowledge packages and declare no tool lists (seed 000 §3.1).
 */
export const SkillFrontmatter = z.object({
  name: z.string().trim().optional(),
  description: z.string().trim().optional(),
  /** Free-form; compared as a string with the version pinned in skills.yaml. */
  version: z.string().trim().optional(),
});
export type SkillFrontmatter = z.infer<typeof SkillFrontmatter>;

/** What a skill document says about itself, plus its body without the frontmatter. */
export interface SkillDoc {
  name: string;
  description: string;
  /** '' when the document declares none. */
  version: string;
  /** The Markdown after the frontmatter (the whole document without one), trimmed. */
  body: string;
}

/** Longest description kept (longer ones are cut with "…"): it goes into every model prompt. */
export const MAX_DESCRIPTION_CHARS = 1024;

const FRONTMATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/;

/**
 * Parses a SKILL.md: YAML frontmatter `name`, `description`, `version` (seed 002); a missing name or
 * description falls back to the first `# ` heading and the first paragraph (seed 000 §3.2), and a
 * missing name to `fallbackName` (the folder). Throws a SkillDocError when the frontmatter is not
 * YAML, not a mapping, or has a field of the wrong type. The frontmatter is read with YAML's
 * failsafe schema so `version: 1.10` stays "1.10" (not the number 1.1).
 */
export function parseSkillDoc(text: string, fallbackName: string): SkillDoc {
  const m = FRONTMATTER.exec(text);
  let meta: SkillFrontmatter = {};
  let body = text.replace(/^\uFEFF/, '');
  if (m) {
    body = m[2] ?? '';
    let raw: unknown;
    try {
      raw = parseYaml(m[1] ?? '', { schema: 'failsafe' }) ?? {};
    } catch (err) {
      throw new SkillDocError(`frontmatter is not valid YAML: ${errorMessage(err).split('\n')[0]}`);
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new SkillDocError('frontmatter is not a mapping of keys to values');
    const parsed = SkillFrontmatter.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new SkillDocError(`frontmatter is invalid: ${issues}`);
    }
    meta = parsed.data;
  }
  body = body.trim();
  const fallback = headingAndParagraph(body);
  return {
    name: meta.name || fallback.name || fallbackName,
    description: clip(meta.description || fallback.description),
    version: meta.version ?? '',
    body,
  };
}

/** The first `# ` heading and the first paragraph of plain text (lines joined), as in seed 000 §3.2. */
function headingAndParagraph(text: string): { name: string; description: string } {
  let name = '';
  const paragraph: string[] = [];
  let inFence = false;
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (t.startsWith('```') || t.startsWith('~~~')) {
      if (paragraph.length > 0) break;
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    if (t === '' || t.startsWith('#')) {
      if (paragraph.length > 0) break;
      if (!name && t.startsWith('# ')) name = t.slice(2).trim();
      continue;
    }
    if (t.startsWith('<!--')) continue;
    paragraph.push(t);
  }
  return { name, description: paragraph.join(' ') };
}

function clip(s: string): string {
  return s.length > MAX_DESCRIPTION_CHARS ? `${s.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : s;
}
