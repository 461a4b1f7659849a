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

/**
 * Creates or repairs `<workspace>/skills/<id>` → the skill folder, safely under concurrency (two
 * skill calls of one turn, replicas on one volume): the link is made at a unique temp name and
 * renamed over (atomic; a rename never follows the entry it replaces), a link that already points at
 * the skill is accepted as is, and a race lost to another load that made the same link is a success.
 * Errors name workspace-relative paths only, never EEXIST or a host path.
 */
export async function linkSkill(ws: Workspace, skill: Skill): Promise<void> {
  const skillsDir = path.join(ws.root, 'skills');
  await ensureSkillsDir(skillsDir);
  const target = path.join(skillsDir, skill.id);
  if ((await linkState(target, skill)) === 'linked') return;
  const staging = path.join(skillsDir, `.${skill.id}.link-${randomUUID()}`);
  try {
    await fs.symlink(skill.dir, staging, 'dir');
    await fs.rename(staging, target);
  } catch (err) {
    await fs.unlink(staging).catch(() => undefined);
    // Another load may have won the race with the very same link.
    if ((await linkState(target, skill)) === 'linked') return;
    throw new SkillSandboxError('CONFLICT', `skills/${skill.id} could not be linked in the workspace`, { cause: err });
  }
}

/**
 * `linked`: a symlink to the skill's folder; `absent` or `stale` (a link elsewhere): to be (re)made.
 * Anything else (a planted folder or file) is refused: never followed, never replaced.
 */
async function linkState(target: string, skill: Skill): Promise<'linked' | 'absent' | 'stale'> {
  const current = await fs.lstat(target).catch(() => undefined);
  if (!current) return 'absent';
  if (!current.isSymbolicLink()) {
    throw new SkillSandboxError('CONFLICT', `skills/${skill.id} already exists in the workspace and is not a skill link; remove it to load skill ${skill.id}`);
  }
  return (await fs.readlink(target).catch(() => undefined)) === skill.dir ? 'linked' : 'stale';
}

/** `skills/` as a plain folder: created when missing (a concurrent creation is fine), refused when it is anything else. */
async function ensureSkillsDir(skillsDir: string): Promise<void> {
  let st = await fs.lstat(skillsDir).catch(() => undefined);
  if (!st) {
    await fs.mkdir(skillsDir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw new SkillSandboxError('UNAVAILABLE', 'skills/ cannot be created in the workspace', { cause: err, retryable: true });
    });
    st = await fs.lstat(skillsDir).catch(() => undefined);
  }
  if (!st?.isDirectory()) throw new SkillSandboxError('CONFLICT', 'skills/ in the workspace is not a plain folder; skills cannot be loaded into it');
}
