import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Skill } from '@agentloop/skills';
import type { Workspace } from '@agentloop/workspace';
import type { DependencyInstaller, DependencyStatus } from './dependencies.js';
import { SkillSandboxError } from './errors.js';

export interface LoadedSkill {
  /** Workspace-relative path of the skill's document, e.g. "skills/pdf/SKILL.md". */
  docPath: string;
  dependencies: DependencyStatus;
}

/**
 * Loads a skill into a thread's workspace (seed 000 §3.4-3.5): `skills/<id>` becomes a symlink to
 * the skill's folder, then its requirements.txt is installed (once per content, see
 * DependencyInstaller). Idempotent. A `skills/<id>` that is not a symlink (or a `skills/` that is
 * not a plain folder) is never followed, replaced or written through: the load is refused.
 */
export async function loadSkill(ws: Workspace, skill: Skill, deps: DependencyInstaller): Promise<LoadedSkill> {
  await linkSkill(ws, skill);
  return { docPath: `skills/${skill.id}/${path.basename(skill.docPath)}`, dependencies: await deps.ensure(skill) };
}

/** Creates or repairs `<workspace>/skills/<id>` → the skill folder. */
export async function linkSkill(ws: Workspace, skill: Skill): Promise<void> {
  const skillsDir = path.join(ws.root, 'skills');
  const dirStat = await fs.lstat(skillsDir).catch(() => undefined);
  if (!dirStat) await fs.mkdir(skillsDir);
  else if (!dirStat.isDirectory()) throw new SkillSandboxError('CONFLICT', 'skills/ in the workspace is not a plain folder; skills cannot be loaded into it');
  const target = path.join(skillsDir, skill.id);
  const current = await fs.lstat(target).catch(() => undefined);
  if (current?.isSymbolicLink()) {
    if ((await fs.readlink(target)) === skill.dir) return;
  } else if (current) {
    throw new SkillSandboxError('CONFLICT', `skills/${skill.id} already exists in the workspace and is not a skill link; remove it to load skill ${skill.id}`);
  }
  // Create beside it and rename over: atomic, and a rename never follows the entry it replaces
  // (were a folder planted meanwhile, the rename fails instead of writing into it).
  const staging = path.join(skillsDir, `.${skill.id}.link-${randomUUID()}`);
  await fs.symlink(skill.dir, staging, 'dir');
  try {
    await fs.rename(staging, target);
  } catch (err) {
    await fs.unlink(staging).catch(() => undefined);
    throw new SkillSandboxError('CONFLICT', `skills/${skill.id} could not be linked in the workspace`, { cause: err });
  }
}
