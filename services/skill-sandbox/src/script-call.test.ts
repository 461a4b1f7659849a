import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SkillRegistry, type Skill } from '@agentloop/skills';
import { scriptArguments, scriptCall } from './script-call.js';

let root: string;
let skill: Skill;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'agentloop-script-call-'));
  const dir = path.join(root, 'pdf');
  const files: Record<string, string> = {
    'SKILL.md': '---\nname: pdf\ndescription: PDFs\n---\n',
    'scripts/__init__.py': '',
    'scripts/fill.py': '',
    'scripts/office/unpack.py': '',
    'scripts/tool/__main__.py': '',
    'scripts/run.mjs': '',
  };
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), text);
  }
  await writeFile(path.join(root, 'outside.py'), '');
  await symlink(path.join(root, 'outside.py'), path.join(dir, 'scripts', 'link.py'));
  skill = (await SkillRegistry.scan(root)).get('pdf')!;
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('scriptArguments', () => {
  it('an array is argv (numbers and booleans as text) with nothing on stdin', () => {
    expect(scriptArguments(['uploads/form.pdf', 'outputs/out.pdf', 3, true])).toEqual({
      argv: ['uploads/form.pdf', 'outputs/out.pdf', '3', 'true'],
      input: '',
    });
    expect(scriptArguments('["a b", "c"]')).toEqual({ argv: ['a b', 'c'], input: '' });
  });

  it("an object (or JSON text of one) is JSON on stdin, the seed's interface; absent is {} on stdin", () => {
    expect(scriptArguments({ input_pdf: 'uploads/a.pdf' })).toEqual({ argv: [], input: '{"input_pdf":"uploads/a.pdf"}' });
    expect(scriptArguments('{"a": 1}')).toEqual({ argv: [], input: '{"a":1}' });
    expect(scriptArguments(undefined)).toEqual({ argv: [], input: '{}' });
  });

  it('refuses items that are not text, a string that is not JSON, and scalars, naming the field', () => {
    expect(() => scriptArguments(['a', { b: 1 }])).toThrow(/"args\[1\]" must be a string/);
    expect(() => scriptArguments(['a\0b'])).toThrow(/"args\[0\]" is longer than 8192 characters or holds a NUL/);
    expect(() => scriptArguments('uploads/a.pdf out.pdf')).toThrow(/"args" is a string but not JSON .*array of strings/);
    expect(() => scriptArguments(42)).toThrow(/"args" must be an array of strings \(argv\) or an object/);
    expect(() => scriptArguments(Array(257).fill('x'))).toThrow(/more than 256 items/);
  });
});

describe('scriptCall', () => {
  it('finds scripts in sub-folders, with or without the scripts/ prefix, case-insensitively', async () => {
    const call = await scriptCall(skill, { script_name: 'scripts/office/unpack.py', args: ['in.docx', 'out'] });
    expect(call).toEqual({
      kind: 'python',
      target: { script: path.join(skill.dir, 'scripts', 'office', 'unpack.py') },
      label: 'scripts/office/unpack.py',
      argv: ['in.docx', 'out'],
      input: '',
    });
    expect((await scriptCall(skill, { script_name: 'Fill.PY' })).label).toBe('scripts/fill.py');
    expect((await scriptCall(skill, { script_name: 'run.mjs' })).kind).toBe('node');
  });

  it('runs a module of the skill with python -m, and only one of the skill', async () => {
    expect(await scriptCall(skill, { module: 'scripts.fill', args: ['x'] })).toMatchObject({ kind: 'python', target: { module: 'scripts.fill' }, argv: ['x'] });
    expect((await scriptCall(skill, { module: 'scripts.tool' })).target).toEqual({ module: 'scripts.tool' });
    await expect(scriptCall(skill, { module: 'http.server' })).rejects.toThrow(/Module not found: http\.server is not a Python module of skill pdf/);
    await expect(scriptCall(skill, { module: 'scripts..x' })).rejects.toThrow(/Module not found/);
  });

  it('refuses traversal, absolute paths, symlinks and names outside scripts/', async () => {
    for (const name of ['../outside.py', 'scripts/../../outside.py', '/etc/passwd', 'link.py', 'SKILL.md', 'office/../fill.py']) {
      await expect(scriptCall(skill, { script_name: name })).rejects.toThrow(/^Script not found: .* is not a script of skill pdf/);
    }
  });

  it('needs exactly one of script_name and module', async () => {
    await expect(scriptCall(skill, {})).rejects.toThrow(/give either "script_name" .* or "module"/);
    await expect(scriptCall(skill, { script_name: 'fill.py', module: 'scripts.fill' })).rejects.toThrow(/give either/);
  });
});
