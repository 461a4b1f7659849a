import { promises as fs } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';

/** A skill package found on disk (seed 000 §3.1, seed 002 §3). */
export interface Skill {
  /** Folder name. */
  id: string;
  name: string;
  description: string;
  /** From the frontmatter `version`, '' when absent. */
  version: string;
  /** Real path of the skill folder. */
  dir: string;
  /** Real path of SKILL.md (or skill.md). */
  docPath: string;
  /** File names directly under scripts/ ending .py, .mjs or .js. */
  scripts: string[];
  hasRequirements: boolean;
}

export interface SkippedSkill {
  id: string;
  reason: string;
}

export const SKILL_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const SCRIPT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\.(py|mjs|js)$/;

/**
 * A skill document's metadata: YAML frontmatter `name`, `description`, `version` (seed 002), or
 * else the first `# ` heading and the first paragraph (seed 000 §3.2). Returns the body without
 * the frontmatter too.
 */
export function parseSkillDoc(text: string, fallbackName: string): { name: string; description: string; version: string; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (m) {
    let meta: Record<string, unknown> = {};
    try {
      const parsed: unknown = parseYaml(m[1] ?? '');
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) meta = parsed as Record<string, unknown>;
    } catch {
      meta = {};
    }
    const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v).trim() : '');
    const body = (m[2] ?? '').trim();
    const fromBody = headingAndParagraph(body);
    return { name: str(meta.name) || fromBody.name || fallbackName, description: str(meta.description) || fromBody.description, version: str(meta.version), body };
  }
  const h = headingAndParagraph(text);
  return { name: h.name || fallbackName, description: h.description, version: '', body: text.trim() };
}

function headingAndParagraph(text: string): { name: string; description: string } {
  let name = '';
  let description = '';
  for (const line of text.split(/\r?\n/).slice(0, 40)) {
    const t = line.trim();
    if (!name && t.startsWith('# ')) name = t.slice(2).trim();
    else if (t && !t.startsWith('#') && !description) {
      description = t;
      break;
    }
  }
  return { name, description };
}

/** Scans a skills folder: one skill per sub-folder with a SKILL.md; broken ones are skipped with a reason. */
export async function scanSkills(root: string): Promise<{ skills: Skill[]; skipped: SkippedSkill[] }> {
  const skills: Skill[] = [];
  const skipped: SkippedSkill[] = [];
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fs.readdir(root, { withFileTypes: true });
  } catch {
    return { skills, skipped };
  }
  const realRoot = await fs.realpath(root);
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.isDirectory() || e.name.startsWith('.')) continue;
    if (!SKILL_ID_PATTERN.test(e.name)) {
      skipped.push({ id: e.name, reason: 'folder name is not a valid skill id (a-z 0-9 _ -, 1-64 characters)' });
      continue;
    }
    const dir = path.join(realRoot, e.name);
    let docPath: string | undefined;
    for (const candidate of ['SKILL.md', 'skill.md']) {
      const p = path.join(dir, candidate);
      const st = await fs.lstat(p).catch(() => undefined);
      if (st?.isFile()) {
        docPath = p;
        break;
      }
    }
    if (!docPath) {
      skipped.push({ id: e.name, reason: 'no SKILL.md' });
      continue;
    }
    let text: string;
    try {
      text = await fs.readFile(docPath, 'utf8');
    } catch (err) {
      skipped.push({ id: e.name, reason: `SKILL.md unreadable: ${(err as Error).message}` });
      continue;
    }
    const meta = parseSkillDoc(text, e.name);
    if (!meta.description) {
      skipped.push({ id: e.name, reason: 'SKILL.md has no description (frontmatter `description` or a first paragraph)' });
      continue;
    }
    const scriptsDir = path.join(dir, 'scripts');
    const scripts: string[] = [];
    for (const s of await fs.readdir(scriptsDir, { withFileTypes: true }).catch(() => [])) {
      if (s.isFile() && SCRIPT_PATTERN.test(s.name)) scripts.push(s.name);
    }
    const req = await fs.lstat(path.join(dir, 'requirements.txt')).catch(() => undefined);
    skills.push({ id: e.name, name: meta.name, description: meta.description, version: meta.version, dir, docPath, scripts: scripts.sort(), hasRequirements: !!req?.isFile() });
  }
  return { skills, skipped };
}
