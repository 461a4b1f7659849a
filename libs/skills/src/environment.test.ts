import { describe, expect, it } from 'vitest';
import { SkillsConfig } from './config.js';

const ENVIRONMENTS = `
environments:
  legal:
    skills: [pdf, docx]
    core: [pdf]
    models:
      base: legal-model
      reasoning: { id: o3-mini, base_url: "https://llm.example/v1", api_key_env: LEGAL_KEY, temperature: 0.2, max_tokens: 4000 }
    agents: [researcher, reviewer]
    system_prompt: You work for the legal team.
    tools: [read_file, write_file]
  plain: { skills: [pdf] }
`;

describe('skills.yaml environments (seed 002: skills, models and agents)', () => {
  it('reads the models, agents, system prompt and tools of an environment', () => {
    const c = SkillsConfig.parse(ENVIRONMENTS);
    expect(c.settingsOf(c.environment('legal')!)).toEqual({
      models: {
        base: 'legal-model',
        reasoning: { id: 'o3-mini', base_url: 'https://llm.example/v1', api_key_env: 'LEGAL_KEY', temperature: 0.2, max_tokens: 4000 },
      },
      agents: ['researcher', 'reviewer'],
      system_prompt: 'You work for the legal team.',
      tools: ['read_file', 'write_file'],
    });
  });

  it('an environment of skills only (the earlier form) sets nothing else', () => {
    const c = SkillsConfig.parse(ENVIRONMENTS);
    expect(c.settingsOf(c.environment('plain')!)).toEqual({ models: {}, agents: null, system_prompt: null, tools: null });
    expect(c.coreFor(c.environment('plain'))).toEqual([]);
  });

  it.each([
    ['an unknown model slot', 'models: { fast: gpt-4o }', /environments\.e\.models: Unrecognized key: "fast"/],
    ['an unknown key of a slot', 'models: { base: { model: gpt-4o } }', /environments\.e\.models\.base/],
    [
      'an API key written in place of its variable name',
      'models: { base: { api_key_env: "sk-abc def" } }',
      /api_key_env is the NAME of an environment variable/,
    ],
    ['a base_url that is not a URL', 'models: { base: { base_url: "not a url" } }', /environments\.e\.models\.base/],
    ['an agent name that cannot be @mentioned', 'agents: ["Research Team"]', /environments\.e\.agents\.0: agent names are 1-64 characters/],
    ['an unknown environment key', 'skillz: [pdf]', /environments\.e: Unrecognized key: "skillz"/],
  ])('refuses %s, naming the path', (_what, yaml, message) => {
    expect(() => SkillsConfig.parse(`environments:\n  e: { ${yaml} }\n`)).toThrow(message);
  });

  it('warns (without failing) about skills it names that are not installed and core skills outside the environment', () => {
    const c = SkillsConfig.parse('environments:\n  legal: { skills: [pdf, docx], core: [xlsx] }\n');
    expect(c.warnings(new Set(['pdf', 'xlsx']))).toEqual([
      'skills.yaml names skills that are not installed: docx',
      "environments.legal.core: xlsx not in the environment's skills (never preloaded)",
    ]);
    expect(SkillsConfig.parse(ENVIRONMENTS).warnings(new Set(['pdf', 'docx']))).toEqual([]);
  });
});
