import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@agentloop/core';
import { DEFAULT_SKILLS_CONFIG_PATH, SkillsConfig } from './config.js';

const skill = (id: string, version = '') => ({ id, version });

describe('SkillsConfig', () => {
  it('applies the seed defaults to an empty file', () => {
    const c = SkillsConfig.parse('');
    expect(c.enabled).toBe(true);
    expect(c.autoLoadOnFileUpload).toBe(true);
    expect(c.core).toEqual([]);
    expect(c.inCatalog('anything')).toBe(true);
    expect(c.availableToSubagent('anything')).toBe(false);
    expect(c.refusal('t', skill('anything'))).toBeUndefined();
  });

  it('reads the seed 000 §3.3 keys: enabled, available_to_subagent, description, auto_load_on_file_types', () => {
    const c = SkillsConfig.parse(`
global: { enabled: true, auto_load_on_file_upload: true }
core: [base]
optional:
  pdf:
    enabled: false
    available_to_subagent: true
    description: "PDF processing"
    auto_load_on_file_types: ["pdf"]
  xlsx: { auto_load_on_file_types: ["xlsx", ".XLS"] }
`);
    expect(c.inCatalog('pdf')).toBe(false);
    expect(c.inCatalog('base')).toBe(true);
    expect(c.availableToSubagent('pdf')).toBe(true);
    expect(c.settings('pdf').description).toBe('PDF processing');
    expect(c.skillsForExtension('.PDF')).toEqual(['pdf']);
    expect(c.skillsForExtension('xls')).toEqual(['xlsx']);
    expect(
      SkillsConfig.parse('global: { auto_load_on_file_upload: false }\noptional: { pdf: { auto_load_on_file_types: [pdf] } }').skillsForExtension('pdf'),
    ).toEqual([]);
  });

  it('per-tenant allowlists: a listed tenant gets only its skills, "*" and unlisted tenants get all', () => {
    const c = SkillsConfig.parse('tenants:\n  acme: { allow: [pdf] }\n  globex: { allow: "*" }\n  empty: { allow: [] }');
    expect(c.allows('acme', 'pdf')).toBe(true);
    expect(c.allows('acme', 'docx')).toBe(false);
    expect(c.refusal('acme', skill('docx'))).toMatchObject({ kind: 'not-allowed' });
    expect(c.allows('globex', 'docx')).toBe(true);
    expect(c.allows('someone-else', 'docx')).toBe(true);
    expect(c.allows('empty', 'pdf')).toBe(false);
  });

  it('refuses a skill whose version differs from the pinned one, with a clear reason', () => {
    const c = SkillsConfig.parse('optional:\n  pdf: { version: "2.0" }\n  num: { version: 3 }');
    expect(c.refusal('t', skill('pdf', '2.0'))).toBeUndefined();
    const refusal = c.refusal('t', skill('pdf', '1.4'));
    expect(refusal).toMatchObject({ kind: 'version-mismatch', pinned: '2.0', actual: '1.4' });
    expect(refusal?.message).toBe('Skill pdf is version 1.4 but version 2.0 is pinned in skills.yaml; it is not available until they match');
    expect(c.refusal('t', skill('pdf'))?.message).toMatch(/is version \(none\) but version 2\.0 is pinned/);
    expect(c.refusal('t', skill('num', '3'))).toBeUndefined();
  });

  it('refuses every skill when the system is switched off', () => {
    expect(SkillsConfig.parse('global: { enabled: false }').refusal('t', skill('pdf'))).toMatchObject({ kind: 'disabled' });
  });

  it('rejects bad input with a ConfigError naming the path', () => {
    expect(() => SkillsConfig.parse('optional:\n  pdf: { enabled: "yes" }')).toThrow(ConfigError);
    expect(() => SkillsConfig.parse('optional:\n  pdf: { enabled: "yes" }')).toThrow(/optional\.pdf\.enabled/);
    expect(() => SkillsConfig.parse('optional:\n  pdf: { auto_load: ["pdf"] }')).toThrow(/optional\.pdf/);
    expect(() => SkillsConfig.parse('optional:\n  "Bad Id": {}')).toThrow(/optional\.Bad Id/);
    expect(() => SkillsConfig.parse('tenants:\n  acme: { allow: ["../x"] }')).toThrow(/tenants\.acme\.allow\.0/);
    expect(() => SkillsConfig.parse('tenants:\n  acme: { allow: all }')).toThrow(/tenants\.acme\.allow/);
    expect(() => SkillsConfig.parse('core: pdf')).toThrow(/core/);
    expect(() => SkillsConfig.parse('global: { enabled: true, extra: 1 }')).toThrow(/global/);
    expect(() => SkillsConfig.parse('optional: [', 'my.yaml')).toThrow(/my\.yaml is not valid YAML/);
  });

  it('loads a file, and reports a missing one as a ConfigError with its path', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-skills-cfg-'));
    try {
      await writeFile(path.join(dir, 'skills.yaml'), 'optional:\n  pdf: { enabled: false }\n');
      expect((await SkillsConfig.load(path.join(dir, 'skills.yaml'))).inCatalog('pdf')).toBe(false);
      await expect(SkillsConfig.load(path.join(dir, 'nope.yaml'))).rejects.toThrow(/SKILLS_CONFIG: cannot read .*nope\.yaml/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the default path is the skill sandbox's shipped skills.yaml, and it is valid", async () => {
    expect(DEFAULT_SKILLS_CONFIG_PATH).toMatch(/services[/\\]skill-sandbox[/\\]config[/\\]skills\.yaml$/);
    expect(existsSync(DEFAULT_SKILLS_CONFIG_PATH)).toBe(true);
    const shipped = await SkillsConfig.load(undefined);
    expect(shipped.skillsForExtension('pdf')).toEqual(['pdf']);
  });
});

describe('SkillsConfig environments (seed 002)', () => {
  it('reads named environments with their skills and core skills', () => {
    const c = SkillsConfig.parse('core: [pdf, csv]\nenvironments:\n  legal: { skills: [pdf, docx] }\n  data: { skills: [csv], core: [] }\n  empty:\n');
    expect(c.environmentNames()).toEqual(['data', 'empty', 'legal']);
    expect(c.environment('legal')?.skills).toEqual(['pdf', 'docx']);
    expect(c.coreFor(c.environment('legal'))).toEqual(['pdf']);
    expect(c.coreFor(c.environment('data'))).toEqual([]);
    expect(c.coreFor(undefined)).toEqual(['pdf', 'csv']);
    expect(c.environment('nope')).toBeUndefined();
    expect(() => SkillsConfig.parse('environments:\n  legal: { skills: [pdf], models: [x] }')).toThrow(/environments\.legal/);
  });
});
