import { promises as fs, type Dirent } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '@agentloop/core';
import { parseSkillDoc } from './skill-doc.js';

/** A skill package found on disk (seed 000 §3.1, seed 002 §3). */
export interface Skill {
  /** Folder name, e.g. "pdf" (see SKILL_ID_PATTERN). */
  id: string;
  name: string;
  description: string;
  /** From the frontmatter `metadata.version` (or the deprecated top-level `version`); '' when absent. */
  version: string;
  license: string;
  compatibility: string;
  /** `allowed-tools`: what the run may use while the skill is active; null: no restriction. */
  allowedTools: string[] | null;
  metadata: Record<string, string>;
  /** Deviations from the Agent Skills spec: logged and listed, the skill still loads. */
  warnings: string[];
  /** Real (symlink-free) absolute path of the skill folder. */
  dir: string;
  /** Real absolute path of SKILL.md (or skill.md). */
  docPath: string;
  /**
   * Paths relative to scripts/ of the regular files ending .py, .mjs or .js, sub-folders included
   * (`office/unpack.py`), sorted.
   */
  scripts: string[];
  /** The folder has a requirements.txt (Python dependencies, seed 000 §3.5). */
  hasRequirements: boolean;
  /** The folder has a package.json (Node dependencies). */
  hasPackageJson: boolean;
  /** Every regular file of the skill, relative to its folder (for case-insensitive links; capped at MAX_SKILL_FILES). */
  files: string[];
}

/** A folder that is not a usable skill, and why. */
export interface SkippedSkill {
  id: string;
  reason: string;
}

export interface ScanResult {
  skills: Skill[];
  skipped: SkippedSkill[];
}

/** Skill ids are folder names of this shape: they become paths and @mentions. */
export const SKILL_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** A script's file name: no separators, no leading dot, one of the runnable extensions. */
export const SCRIPT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\.(py|mjs|js)$/;
/** A folder name on a script's path under scripts/ (no dot folders, no `..`). */
const SCRIPT_DIR_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
/** Deepest sub-folder of scripts/ searched, and most files listed per skill: a skill is a small package. */
export const MAX_SCRIPT_DEPTH = 4;
export const MAX_SKILL_FILES = 2000;

/** The documents a skill folder may hold, in order of preference. */
export const SKILL_DOC_NAMES = ['SKILL.md', 'skill.md'] as const;

/**
 * Whether `name` could be a script of a skill: a path relative to scripts/ (`fill.py`,
 * `office/unpack.py`) of plain folder names and a file name with a runnable extension.
 */
export function isScriptName(name: string): boolean {
  const parts = name.split('/');
  const file = parts.pop() ?? '';
  if (parts.length > MAX_SCRIPT_DEPTH || name.includes('..')) return false;
  return SCRIPT_NAME_PATTERN.test(file) && parts.every((p) => SCRIPT_DIR_PATTERN.test(p));
}

/**
 * The skills under one folder, as scanned at one moment. Scanning never throws for a broken
 * package: it is left out and reported in `skipped` with the reason.
 */
export class SkillRegistry {
  private readonly byId: ReadonlyMap<string, Skill>;

  private constructor(
    /** The folder scanned (as given). */
    readonly root: string,
    readonly skills: readonly Skill[],
    readonly skipped: readonly SkippedSkill[],
  ) {
    this.byId = new Map(skills.map((s) => [s.id, s]));
  }

  /** Scans `root`: one skill per sub-folder holding a SKILL.md (or skill.md). A missing root is empty. */
  static async scan(root: string): Promise<SkillRegistry> {
    const { skills, skipped } = await scanSkills(root);
    return new SkillRegistry(root, skills, skipped);
  }

  /** An empty registry (nothing scanned yet). */
  static empty(root = ''): SkillRegistry {
    return new SkillRegistry(root, [], []);
  }

  get(id: string): Skill | undefined {
    return this.byId.get(id);
  }

  ids(): string[] {
    return this.skills.map((s) => s.id);
  }
}

/**
 * Scans a skills folder (see SkillRegistry.scan). Folders are visited in name order; a folder is
 * skipped (with a reason) when its name is not a valid id, it is a symbolic link, it has no
 * SKILL.md, the document's frontmatter is broken, or there is no description.
 */
export async function scanSkills(root: string): Promise<ScanResult> {
  const skills: Skill[] = [];
  const skipped: SkippedSkill[] = [];
  let entries: Dirent[];
  let realRoot: string;
  try {
    realRoot = await fs.realpath(root);
    entries = await fs.readdir(realRoot, { withFileTypes: true });
  } catch {
    return { skills, skipped };
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.name.startsWith('.')) continue;
    if (e.isSymbolicLink()) {
      // Its real folder would lie outside the skills root that workspaces may link into.
      skipped.push({ id: e.name, reason: 'the skill folder is a symbolic link; copy the skill into the skills folder instead' });
      continue;
    }
    if (!e.isDirectory()) continue;
    if (!SKILL_ID_PATTERN.test(e.name)) {
      skipped.push({ id: e.name, reason: 'the folder name is not a valid skill id (1-64 characters of a-z 0-9 _ -, starting with a letter or digit)' });
      continue;
    }
    const result = await readSkill(path.join(realRoot, e.name), e.name);
    if ('reason' in result) skipped.push(result);
    else skills.push(result);
  }
  return { skills, skipped };
}

async function readSkill(dir: string, id: string): Promise<Skill | SkippedSkill> {
  let docPath: string | undefined;
  for (const candidate of SKILL_DOC_NAMES) {
    const p = path.join(dir, candidate);
    const st = await fs.lstat(p).catch(() => undefined);
    if (st?.isSymbolicLink()) return { id, reason: `${candidate} is a symbolic link` };
    if (st?.isFile()) {
      docPath = p;
      break;
    }
  }
  if (!docPath) return { id, reason: 'no SKILL.md (or skill.md) in the folder' };
  let text: string;
  try {
    text = await fs.readFile(docPath, 'utf8');
  } catch (err) {
    return { id, reason: `${path.basename(docPath)} cannot be read: ${errorMessage(err)}` };
  }
  let doc;
  try {
    doc = parseSkillDoc(text, id);
  } catch (err) {
    return { id, reason: `${path.basename(docPath)}: ${errorMessage(err)}` };
  }
  if (!doc.description) {
    return { id, reason: `${path.basename(docPath)} has no description (frontmatter \`description\`, or a first paragraph)` };
  }
  const files = await listFiles(dir);
  // Regular files only (listFiles never follows a symlink: it could point anywhere).
  const scripts = files.filter((f) => f.startsWith('scripts/') && isScriptName(f.slice('scripts/'.length))).map((f) => f.slice('scripts/'.length));
  return {
    id,
    name: doc.name,
    description: doc.description,
    version: doc.version,
    license: doc.license,
    compatibility: doc.compatibility,
    allowedTools: doc.allowedTools,
    metadata: doc.metadata,
    warnings: doc.warnings,
    dir,
    docPath,
    scripts: scripts.sort(),
    hasRequirements: files.includes('requirements.txt'),
    hasPackageJson: files.includes('package.json'),
    files,
  };
}

/**
 * The regular files under `dir`, relative and `/`-separated, sorted, breadth-first up to
 * MAX_SKILL_FILES. Symbolic links, dot entries, node_modules and __pycache__ are not listed.
 */
async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const queue: Array<{ abs: string; rel: string; depth: number }> = [{ abs: dir, rel: '', depth: 0 }];
  while (queue.length > 0 && out.length < MAX_SKILL_FILES) {
    const { abs, rel, depth } = queue.shift()!;
    const entries = await fs.readdir(abs, { withFileTypes: true }).catch(() => [] as Dirent[]);
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (e.name.startsWith('.') || e.name === 'node_modules' || e.name === '__pycache__') continue;
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isFile() && out.length < MAX_SKILL_FILES) out.push(childRel);
      else if (e.isDirectory() && depth < MAX_SCRIPT_DEPTH + 1) queue.push({ abs: path.join(abs, e.name), rel: childRel, depth: depth + 1 });
    }
  }
  return out.sort();
}
