import type { EnvironmentModels } from '@agentloop/skills';
import { ModelConfigError } from '../errors.js';
import { MODEL_SLOTS, type ModelSlot, type SlotConfig } from './registry.js';

/**
 * The model slots of a run in an environment (seed 002: an environment carries its models): the
 * deployment's MODEL_* slots with the environment's `models` overrides applied. A string override
 * is a model id on the slot's endpoint; an object overrides the settings it names. A slot the
 * deployment did not configure needs the environment's own `api_key_env` (the key never sits in
 * skills.yaml); a variable it names that is not set is the operator's mistake, named here.
 */
export function environmentSlots(
  global: Partial<Record<ModelSlot, SlotConfig>>,
  overrides: EnvironmentModels,
  env: NodeJS.ProcessEnv,
  environment: string,
): Partial<Record<ModelSlot, SlotConfig>> {
  const out: Partial<Record<ModelSlot, SlotConfig>> = { ...global };
  for (const slot of MODEL_SLOTS) {
    const o = overrides[slot];
    if (o === undefined) continue;
    const where = `skills.yaml environments.${environment}.models.${slot}`;
    const given = typeof o === 'string' ? { id: o } : o;
    let apiKey = global[slot]?.apiKey;
    if (given.api_key_env !== undefined) {
      apiKey = env[given.api_key_env];
      if (!apiKey) throw new ModelConfigError(`${where}: api_key_env names ${given.api_key_env}, which is not set in the orchestrator's environment`);
    }
    if (!apiKey) {
      throw new ModelConfigError(
        `${where}: the deployment has no ${slot} slot (MODEL_${slot.toUpperCase()}_API_KEY is not set); give the environment's own {id, base_url, api_key_env}`,
      );
    }
    const base = global[slot];
    const maxTokens = given.max_tokens ?? base?.maxTokens;
    out[slot] = {
      apiKey,
      baseUrl: given.base_url ?? base?.baseUrl ?? 'https://api.openai.com/v1',
      modelId: given.id ?? base?.modelId ?? 'gpt-4o-mini',
      temperature: given.temperature ?? base?.temperature ?? 0.7,
      ...(maxTokens !== undefined ? { maxTokens } : {}),
    };
  }
  return out;
}
