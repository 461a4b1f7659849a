import { lstat, mkdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '@agentloop/core';
import type { Skill } from '@agentloop/skills';
import { createTempDir, WorkspaceManager, type TempDir, type Workspace } from '@agentloop/workspace';
import { SkillSandboxError } from './errors.js';
import { linkSkill } from './loader.js';

let tmp: TempDir;
let ws: Workspace;
const skill = (id: string): Skill => ({
  id,
  name: id,
  description: id,
  version: '',
  license: '',
  compatibility: '',
  allowedTools: null,
  metadata: {},
  warnings: [],
  hasPackageJson: false,
  files: [],
  dir: path.join(tmp.path, 'skills', id),
  docPath: path.join(tmp.path, 'skills', id, 'SKILL.md'),
  scripts: [],
  hasRequirements: false,
});

beforeEach(async () => {
  tmp = await createTempDir('agentloop-loader-');
  for (const id of ['pdf', 'docx']) {
    await mkdir(path.join(tmp.path, 'skills', id), { recursive: true });
    await writeFile(path.join(tmp.path, 'skills', id, 'SKILL.md'), `# ${id}`);
  }
  ws = await new WorkspaceManager({ root: path.join(tmp.path, 'ws'), skillRoots: [path.join(tmp.path, 'skills')], logger: silentLogger() }).ensure(
    'acme',
    't1',
  );
});
afterEach(async () => tmp[Symbol.asyncDispose]());

describe('linkSkill', () => {
  it('concurrent links into a workspace without skills/ all succeed (no EEXIST), each pointing at its skill', async () => {
    for (let round = 0; round < 10; round++) {
      await rm(path.join(ws.root, 'skills'), { recursive: true, force: true });
      const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => linkSkill(ws, skill(i % 2 ? 'pdf' : 'docx'))));
      expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      expect(await readlink(path.join(ws.root, 'skills', 'pdf'))).toBe(skill('pdf').dir);
      expect(await readlink(path.join(ws.root, 'skills', 'docx'))).toBe(skill('docx').dir);
    }
  });

  it('keeps a link that already points at the skill, and repairs a stale one', async () => {
    await linkSkill(ws, skill('pdf'));
    const before = await lstat(path.join(ws.root, 'skills', 'pdf'));
    await linkSkill(ws, skill('pdf'));
    expect((await lstat(path.join(ws.root, 'skills', 'pdf'))).ino).toBe(before.ino);
    await rm(path.join(ws.root, 'skills', 'pdf'));
    await symlink(skill('docx').dir, path.join(ws.root, 'skills', 'pdf'));
    await linkSkill(ws, skill('pdf'));
    expect(await readlink(path.join(ws.root, 'skills', 'pdf'))).toBe(skill('pdf').dir);
  });

  it('refuses a planted folder with CONFLICT naming only workspace-relative paths', async () => {
    await mkdir(path.join(ws.root, 'skills', 'pdf'));
    const err = await linkSkill(ws, skill('pdf')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SkillSandboxError);
    expect((err as SkillSandboxError).code).toBe('CONFLICT');
    expect((err as Error).message).toBe('skills/pdf already exists in the workspace and is not a skill link; remove it to load skill pdf');
    expect((err as Error).message).not.toContain(tmp.path);
  });
});
