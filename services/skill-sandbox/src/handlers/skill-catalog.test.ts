import { afterEach, describe, expect, it } from 'vitest';
import { Headers, RemoteError } from '@agentloop/bus';
import { SKILL_CATALOG_SUBJECT, SkillCatalogResponse } from '@agentloop/skills';
import { startSandboxHarness, type SandboxHarness } from '../testing/index.js';

let h: SandboxHarness | undefined;
afterEach(async () => {
  await h?.[Symbol.asyncDispose]();
  h = undefined;
});

const ask = async (harness: SandboxHarness, body: unknown, tenant = 'acme') => {
  const reply = await harness.bus.request(SKILL_CATALOG_SUBJECT, new TextEncoder().encode(JSON.stringify(body)), {
    timeoutMs: 10_000,
    headers: { [Headers.tenant]: tenant },
  });
  return SkillCatalogResponse.parse(JSON.parse(new TextDecoder().decode(reply.data)));
};

describe('agentloop.skills.catalog', () => {
  it('lists the spec fields and warnings of each skill, filtered by environment, with its core skills', async () => {
    h = await startSandboxHarness({
      copyProjectSkills: false,
      skillsYaml:
        'core: [base]\noptional:\n  old: { enabled: false }\nenvironments:\n' +
        '  legal: { skills: [pdf-forms, base], models: { base: legal-model }, agents: [researcher], system_prompt: Legal team., tools: [read_file] }\n',
      files: {
        'pdf-forms/SKILL.md':
          '---\nname: pdf-forms\ndescription: Fill PDF forms.\nlicense: Apache-2.0\nallowed-tools: read_file run_skill_script\nmetadata:\n  version: "2.1"\n---\n',
        'base/SKILL.md': '---\nname: base\ndescription: Basics.\n---\n',
        'old/SKILL.md': '---\nname: Old Skill\ndescription: Old.\nversion: "1"\n---\n',
      },
    });
    const all = await ask(h, {});
    expect(all.environment).toBeNull();
    expect(all.settings).toBeNull();
    expect(all.skills.map((s) => [s.id, s.in_catalog, s.core])).toEqual([
      ['base', true, true],
      ['old', false, false],
      ['pdf-forms', true, false],
    ]);
    expect(all.skills[2]).toMatchObject({ version: '2.1', license: 'Apache-2.0', allowed_tools: ['read_file', 'run_skill_script'], warnings: [] });
    expect(all.skills[1]!.warnings).toEqual([
      '`name` "Old Skill" does not follow the spec (1-64 lowercase letters, digits and single hyphens)',
      '`name` "Old Skill" differs from the folder name "old" (the spec requires them to match)',
      'top-level `version` is deprecated; declare it as `metadata.version`',
    ]);
    const legal = await ask(h, { environment: 'legal' });
    expect(legal.skills.map((s) => s.id)).toEqual(['base', 'pdf-forms']);
    // Seed 002: the environment's models, agents, system prompt and tools travel with its catalog.
    expect(legal.settings).toEqual({ models: { base: 'legal-model' }, agents: ['researcher'], system_prompt: 'Legal team.', tools: ['read_file'] });
  });

  it('refuses an unknown environment naming the configured ones, and a malformed request naming the field', async () => {
    h = await startSandboxHarness({ copyProjectSkills: false, skillsYaml: 'environments:\n  legal: { skills: [] }\n', files: {} });
    await expect(ask(h, { environment: 'nope' })).rejects.toThrow(RemoteError);
    await expect(ask(h, { environment: 'nope' })).rejects.toThrow('Unknown environment: nope. Configured environments (skills.yaml environments): legal');
    await expect(ask(h, { subagent: 'yes' })).rejects.toThrow(/Invalid skill catalog request: subagent/);
  });

  it('reload() re-reads a changed skill without a restart', async () => {
    h = await startSandboxHarness({ copyProjectSkills: false, files: { 'a/SKILL.md': '---\nname: a\ndescription: First.\n---\n' } });
    expect((await ask(h, {})).skills[0]!.description).toBe('First.');
    const { writeFile } = await import('node:fs/promises');
    const path = await import('node:path');
    await writeFile(path.join(h.skillsRoot, 'a', 'SKILL.md'), '---\nname: a\ndescription: Second.\n---\n');
    await h.sandbox.reload('test');
    expect((await ask(h, {})).skills[0]!.description).toBe('Second.');
  });
});
