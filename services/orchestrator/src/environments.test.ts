import { describe, expect, it } from 'vitest';
import { NO_ENVIRONMENT_SETTINGS, type EnvironmentSettings } from '@agentloop/skills';
import { tightenVerdict } from './agent-config.js';
import { runEnvironment, runPolicy } from './environments.js';
import { RunInputError } from './errors.js';

const settings = (over: Partial<EnvironmentSettings>): EnvironmentSettings => ({ ...NO_ENVIRONMENT_SETTINGS, ...over });

describe('runPolicy: the agent configuration with the environment on top', () => {
  it('without an environment is the agent configuration', () => {
    const p = runPolicy({ runConfig: { configurable: { tools: ['read_file'], system_prompt: 'Be brief.' } } });
    expect(p.tools).toEqual(new Set(['read_file']));
    expect(p.instructions).toBe('Be brief.');
    expect(p.agents).toBeNull();
  });

  it("puts the environment's system prompt first, keeps only tools both allow, and takes the environment's agents", () => {
    const p = runPolicy({
      runConfig: { configurable: { environment: 'legal', tools: ['read_file', 'http_fetch'], system_prompt: 'Be brief.' } },
      environment: settings({ system_prompt: 'Legal team.', tools: ['read_file', 'write_file'], agents: ['researcher'] }),
    });
    expect(p.instructions).toBe('Legal team.\n\nBe brief.');
    expect(p.tools).toEqual(new Set(['read_file']));
    expect(p.agents).toEqual(new Set(['researcher']));
    expect(p.environment).toBe('legal');
  });

  it("an environment's tools apply alone when the assistant sets none; none set leaves every tool", () => {
    expect(runPolicy({ environment: settings({ tools: ['write_file'] }) }).tools).toEqual(new Set(['write_file']));
    expect(runPolicy({ environment: settings({}) }).tools).toBeNull();
  });
});

describe('runEnvironment', () => {
  const skills = (answer: (env: string | undefined) => unknown) => ({
    catalog: async (_tenant: string, q: { environment?: string } = {}) => answer(q.environment) as never,
  });

  it("reads the named environment's settings from the catalog; none named: null", async () => {
    const legal = settings({ agents: ['researcher'] });
    const client = skills((env) => ({ environment: env ?? null, settings: env === 'legal' ? legal : null, skills: [] }));
    expect(await runEnvironment(client, 't', { configurable: { environment: 'legal' } }, false)).toEqual({ name: 'legal', settings: legal });
    expect(await runEnvironment(client, 't', {}, false)).toBeNull();
  });

  it('an unknown environment fails the run with the error naming the configured ones', async () => {
    const client = skills(() => {
      throw new RunInputError('Invalid config.configurable.environment: Unknown environment: nope. Configured environments: legal');
    });
    await expect(runEnvironment(client, 't', { configurable: { environment: 'nope' } }, false)).rejects.toThrow(/Configured environments: legal/);
  });
});

describe("an environment's tools allow-list holds at the approval step", () => {
  it('a call to a tool outside it is denied, naming the environment and its tools', () => {
    const policy = runPolicy({ runConfig: { configurable: { environment: 'legal' } }, environment: settings({ tools: ['read_file'] }) });
    const verdict = tightenVerdict({ action: 'allow', reason: '', risk_level: 'low', rule: '' }, { name: 'http_fetch', args: {} }, policy);
    expect(verdict).toMatchObject({ action: 'deny', reason: 'This run (environment legal) may not use tool http_fetch; its tools are: read_file' });
  });
});
