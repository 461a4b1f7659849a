import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_MODEL_SLOTS } from '@agentloop/skills';
import { environmentSlots } from './environment-slots.js';
import { MODEL_SLOTS, ModelRegistry, type SlotConfig } from './registry.js';

const BASE: SlotConfig = { apiKey: 'global-key', baseUrl: 'https://global.example/v1', modelId: 'global-model', temperature: 0.7 };

describe('environment model slots (seed 002)', () => {
  it('skills.yaml knows the same slots as the registry', () => {
    expect([...ENVIRONMENT_MODEL_SLOTS]).toEqual([...MODEL_SLOTS]);
  });

  it('a string is the model id on the slot the deployment configured', () => {
    expect(environmentSlots({ base: BASE }, { base: 'legal-model' }, {}, 'legal')).toEqual({ base: { ...BASE, modelId: 'legal-model' } });
  });

  it('an object overrides the settings it names; a slot the deployment lacks takes its key from api_key_env', () => {
    const slots = environmentSlots(
      { base: BASE },
      { reasoning: { id: 'o3-mini', base_url: 'https://legal.example/v1', api_key_env: 'LEGAL_KEY', max_tokens: 900 }, base: { temperature: 0 } },
      { LEGAL_KEY: 'legal-key' },
      'legal',
    );
    expect(slots).toEqual({
      base: { ...BASE, temperature: 0 },
      reasoning: { apiKey: 'legal-key', baseUrl: 'https://legal.example/v1', modelId: 'o3-mini', temperature: 0.7, maxTokens: 900 },
    });
  });

  it('refuses a slot with no key, and an api_key_env that is not set, naming the environment and slot', () => {
    expect(() => environmentSlots({ base: BASE }, { vision: 'gpt-4o' }, {}, 'legal')).toThrow(
      'skills.yaml environments.legal.models.vision: the deployment has no vision slot (MODEL_VISION_API_KEY is not set)',
    );
    expect(() => environmentSlots({ base: BASE }, { base: { api_key_env: 'NOPE' } }, {}, 'legal')).toThrow(
      "skills.yaml environments.legal.models.base: api_key_env names NOPE, which is not set in the orchestrator's environment",
    );
  });

  it("the registry of an environment resolves its models and routes to its slots; without overrides it is the deployment's", () => {
    const registry = new ModelRegistry({ base: BASE }, false, { LEGAL_KEY: 'k' });
    expect(registry.forEnvironment('plain', {})).toBe(registry);
    const legal = registry.forEnvironment('legal', { base: 'legal-model', code: { id: 'coder', api_key_env: 'LEGAL_KEY' } });
    expect(legal.resolve(undefined).modelId).toBe('legal-model');
    expect(legal.configuredSlots()).toEqual(['base', 'code']);
    expect(legal.resolve('code').modelId).toBe('coder');
    expect(registry.forEnvironment('legal', { base: 'legal-model', code: { id: 'coder', api_key_env: 'LEGAL_KEY' } })).toBe(legal);
    expect(registry.forEnvironment('legal', { base: 'edited-model' }).resolve(undefined).modelId).toBe('edited-model');
    expect(registry.resolve(undefined).modelId).toBe('global-model');
  });
});
