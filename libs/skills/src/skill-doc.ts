import { parse as parseYaml } from 'yaml';
import { errorMessage } from '@agentloop/core';
import { SkillDocError } from './errors.js';
import { RawFrontmatter, readSpecFields, type SpecFields } from './frontmatter.js';

/** What a skill document says about itself, plus its body without the frontmatter. */
export interface SkillDoc {
  name: string;
  description: string;
  /** `metadata.version` (or the deprecated top-level `version`); '' when the document declares none. */
  version: string;
  /** The Markdown after the frontmatter (the whole document without one), trimmed. */
  body: string;
  license: string;
  compatibility: string;
  /** `allowed-tools`: the tools the run may use while the skill is active; null: no restriction. */
  allowedTools: string[] | null;
  metadata: Record<string, string>;
  /** Deviations from the Agent Skills spec (frontmatter.ts); the skill still loads. */
  warnings: string[];
}

/** Longest description kept (longer ones are cut with "…"): it goes into every model prompt. */
export const MAX_DESCRIPTION_CHARS = 1024;

const FRONTMATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/;

/**
 * Parses a SKILL.md: YAML frontmatter per the Agent Skills spec (frontmatter.ts: name, description,
 * license, compatibility, allowed-tools, metadata; deviations become `warnings`); a missing name or
 * description falls back to the first `# ` heading and the first paragraph (seed 000 §3.2), and a
 * missing name to `fallbackName` (the folder). Throws a SkillDocError only when the frontmatter is
 * not YAML or not a mapping (the skill is unusable). The frontmatter is read with YAML's
 * failsafe schema so `version: 1.10` stays "1.10" (not the number 1.1).
 */
export function parseSkillDoc(text: string, fallbackName: string): SkillDoc {
  const m = FRONTMATTER.exec(text);
  let fields: SpecFields | undefined;
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
    fields = readSpecFields(RawFrontmatter.parse(raw), fallbackName);
  }
  body = body.trim();
  const fallback = headingAndParagraph(body);
  const warnings = fields ? fields.warnings : ['no YAML frontmatter (the spec requires `name` and `description` in one)'];
  return {
    name: fields?.name || fallback.name || fallbackName,
    description: clip(fields?.description || fallback.description),
    version: fields?.version ?? '',
    body,
    license: fields?.license ?? '',
    compatibility: fields?.compatibility ?? '',
    allowedTools: fields?.allowedTools ?? null,
    metadata: fields?.metadata ?? {},
    warnings,
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
