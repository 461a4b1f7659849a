import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SkillRegistry, isScriptName } from './registry.js';

let root: string;
let outside: string;

async function skill(id: string, doc: string | undefined, files: Record<string, string> = {}, docName = 'SKILL.md') {
  const dir = path.join(root, id);
  await mkdir(dir, { recursive: true });
  if (doc !== undefined) await writeFile(path.join(dir, docName), doc);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), content);
  }
}

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'agentloop-skills-reg-'));
  outside = await mkdtemp(path.join(tmpdir(), 'agentloop-skills-out-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('SkillRegistry.scan', () => {
  it('finds skills with their metadata, scripts and requirements', async () => {
    await skill('pdf', '---\nname: PDF\ndescription: PDF files\nversion: "3"\n---\n# PDF', {
      'scripts/extract.py': 'print(1)',
      'scripts/fill.mjs': '',
      'scripts/helper.js': '',
      'scripts/README.md': '',
      'scripts/nested/deep.py': '',
      'requirements.txt': 'pypdf\n',
    });
    await skill('notes', '# Notes\n\nTake notes.', {}, 'skill.md');
    const reg = await SkillRegistry.scan(root);
    expect(reg.ids()).toEqual(['notes', 'pdf']);
    const pdf = reg.get('pdf')!;
    expect(pdf).toMatchObject({
      id: 'pdf',
      name: 'PDF',
      description: 'PDF files',
      version: '3',
      scripts: ['extract.py', 'fill.mjs', 'helper.js', 'nested/deep.py'],
      hasRequirements: true,
      hasPackageJson: false,
      files: ['SKILL.md', 'requirements.txt', 'scripts/README.md', 'scripts/extract.py', 'scripts/fill.mjs', 'scripts/helper.js', 'scripts/nested/deep.py'],
    });
    expect(pdf.docPath).toBe(path.join(pdf.dir, 'SKILL.md'));
    expect(reg.get('notes')).toMatchObject({ name: 'Notes', description: 'Take notes.', scripts: [], hasRequirements: false });
    expect(path.basename(reg.get('notes')!.docPath)).toBe('skill.md');
    expect(reg.skipped).toEqual([]);
  });

  it('skips broken packages with a reason instead of throwing', async () => {
    await skill('good', '---\nname: Good\ndescription: fine\n---\n');
    await skill('no-doc', undefined, { 'README.md': 'x' });
    await skill('Bad_Name', '---\nname: x\ndescription: y\n---\n');
    await skill('bad-yaml', '---\nname: [oops\n---\n');
    await skill('no-description', '---\nname: Empty\n---\n## Only headings\n');
    await mkdir(path.join(outside, 'elsewhere'));
    await writeFile(path.join(outside, 'elsewhere', 'SKILL.md'), '---\nname: E\ndescription: e\n---\n');
    await symlink(path.join(outside, 'elsewhere'), path.join(root, 'linked'));
    await skill('doc-link', undefined);
    await symlink(path.join(outside, 'elsewhere', 'SKILL.md'), path.join(root, 'doc-link', 'SKILL.md'));
    const reg = await SkillRegistry.scan(root);
    expect(reg.ids()).toEqual(['good']);
    const reasons = Object.fromEntries(reg.skipped.map((s) => [s.id, s.reason]));
    expect(Object.keys(reasons).sort()).toEqual(['Bad_Name', 'bad-yaml', 'doc-link', 'linked', 'no-description', 'no-doc']);
    expect(reasons['no-doc']).toMatch(/no SKILL\.md/);
    expect(reasons['Bad_Name']).toMatch(/not a valid skill id/);
    expect(reasons['bad-yaml']).toMatch(/frontmatter is not valid YAML/);
    expect(reasons['no-description']).toMatch(/no description/);
    expect(reasons['linked']).toMatch(/symbolic link/);
    expect(reasons['doc-link']).toMatch(/SKILL\.md is a symbolic link/);
  });

  it('does not list a symlinked script or anything under a symlinked folder, even one pointing inside the skill', async () => {
    await skill('s', '---\nname: S\ndescription: s\n---\n', { 'scripts/real.py': '' });
    await symlink(path.join(root, 's', 'scripts', 'real.py'), path.join(root, 's', 'scripts', 'alias.py'));
    await symlink('/etc/passwd', path.join(root, 's', 'scripts', 'passwd.py'));
    await mkdir(path.join(outside, 'lib'), { recursive: true });
    await writeFile(path.join(outside, 'lib', 'evil.py'), '');
    await symlink(path.join(outside, 'lib'), path.join(root, 's', 'scripts', 'linked'));
    expect((await SkillRegistry.scan(root)).get('s')!.scripts).toEqual(['real.py']);
  });

  it('returns an empty registry for a missing folder', async () => {
    const reg = await SkillRegistry.scan(path.join(root, 'missing'));
    expect(reg.skills).toEqual([]);
    expect(reg.skipped).toEqual([]);
  });
});

describe('isScriptName', () => {
  it('accepts paths under scripts/ of plain folder names ending in a runnable file name only', () => {
    expect(['stats.py', 'a-b_c.1.mjs', 'x.js', 'dir/x.py', 'office/helpers/merge_runs.py'].map(isScriptName)).toEqual(Array(5).fill(true));
    expect(['../x.py', 'a/../x.py', '.hidden.py', '.git/x.py', 'x.sh', 'x..py', 'x.py/', '/abs.py', 'a//x.py', 'a/b/c/d/e/x.py', ''].map(isScriptName)).toEqual(
      Array(11).fill(false),
    );
  });
});
