import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { ScriptedChatModel, ScriptedModelSpec } from './scripted.js';
import { ModelConfigError } from '../errors.js';
import type { EnvironmentModels } from '@agentloop/skills';
import { environmentSlots } from './environment-slots.js';

export const MODEL_SLOTS = ['base', 'reasoning', 'vision', 'code', 'chat'] as const;
export type ModelSlot = (typeof MODEL_SLOTS)[number];

/** Which media a model takes as input besides text (tool results' images and audio, graph/tool-media.ts). */
export interface MediaAcceptance {
  images: boolean;
  audio: boolean;
}

export const TEXT_ONLY: MediaAcceptance = { images: false, audio: false };

export interface SlotConfig {
  apiKey: string;
  baseUrl: string;
  modelId: string;
  temperature: number;
  maxTokens?: number;
  /** `<PREFIX>VISION` / `<PREFIX>AUDIO`; the vision slot takes images unless told otherwise. */
  accepts?: MediaAcceptance;
}

/** A `true`/`false` (or 1/0, yes/no) flag of a slot; `fallback` when unset. */
function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const v = env[name]?.trim().toLowerCase();
  if (v === undefined || v === '') return fallback;
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new ModelConfigError(`${name} must be true or false, got ${JSON.stringify(env[name])}`);
}

/** Env prefixes per slot: the canonical one first, then the seeds' aliases (seed 001 §1.7). */
const PREFIXES: Record<ModelSlot, string[]> = {
  base: ['MODEL_BASE_', 'MODEL_BASIC_'],
  reasoning: ['MODEL_REASONING_'],
  vision: ['MODEL_VISION_', 'MODEL_MULTIMODAL_'],
  code: ['MODEL_CODE_'],
  chat: ['MODEL_CHAT_'],
};

/**
 * Reads the five slots from env: `<PREFIX>API_KEY` (required to enable a slot), `_BASE_URL`, `_ID`,
 * `_TEMPERATURE`, `_MAX_TOKENS`, and what the model takes besides text: `_VISION` (images; default
 * true for the vision slot only) and `_AUDIO` (wav/mp3 input; default false).
 */
export function slotsFromEnv(env: NodeJS.ProcessEnv): Partial<Record<ModelSlot, SlotConfig>> {
  const out: Partial<Record<ModelSlot, SlotConfig>> = {};
  for (const slot of MODEL_SLOTS) {
    for (const p of PREFIXES[slot]) {
      const apiKey = env[`${p}API_KEY`];
      if (!apiKey) continue;
      const temperature = Number(env[`${p}TEMPERATURE`] ?? '0.7');
      const maxTokens = env[`${p}MAX_TOKENS`] ? Number(env[`${p}MAX_TOKENS`]) : undefined;
      if (!Number.isFinite(temperature)) throw new ModelConfigError(`${p}TEMPERATURE must be a number`);
      out[slot] = {
        apiKey,
        baseUrl: env[`${p}BASE_URL`] || 'https://api.openai.com/v1',
        modelId: env[`${p}ID`] || 'gpt-4o-mini',
        temperature,
        ...(maxTokens !== undefined && Number.isFinite(maxTokens) ? { maxTokens } : {}),
        accepts: { images: flag(env, `${p}VISION`, slot === 'vision'), audio: flag(env, `${p}AUDIO`, false) },
      };
      break;
    }
  }
  return out;
}

/** `config.configurable.model`: a scripted spec, a slot name, or {slot}. */
export const ModelSelection = z.union([ScriptedModelSpec, z.enum(MODEL_SLOTS), z.object({ slot: z.enum(MODEL_SLOTS) }).strict()]);

export interface ResolvedModel {
  model: BaseChatModel;
  /** "scripted" or the slot name; written to run metadata and logs. */
  label: string;
  /** `replay`: answers from a run recording (recording/replay-model.ts). */
  provider: 'scripted' | 'openai-compatible' | 'replay';
  modelId: string;
  /** Media it takes besides text; absent: text only. */
  accepts?: MediaAcceptance;
}

/**
 * Builds the chat model a run uses. OpenAI-compatible endpoints (OpenAI,
 * vLLM, Ollama, DeepSeek...) through @langchain/openai; the scripted
 * provider only when the deployment allows it.
 */
export class ModelRegistry {
  private readonly cache = new Map<ModelSlot, BaseChatModel>();
  /** Registries of environments with model overrides, by their settings: a changed skills.yaml gets a new one. */
  private readonly environments = new Map<string, ModelRegistry>();

  constructor(
    private readonly slots: Partial<Record<ModelSlot, SlotConfig>>,
    private readonly allowScripted: boolean,
    /** Where an environment's `api_key_env` is looked up (the orchestrator's own environment). */
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /**
   * The registry of a run in an environment (seed 002): this one when the environment overrides no
   * slot, else one with its slots (environment-slots.ts), kept while its settings stay the same.
   */
  forEnvironment(environment: string, overrides: EnvironmentModels): ModelRegistry {
    if (Object.values(overrides).every((o) => o === undefined)) return this;
    const key = JSON.stringify([environment, overrides]);
    let registry = this.environments.get(key);
    if (!registry) {
      registry = new ModelRegistry(environmentSlots(this.slots, overrides, this.env, environment), this.allowScripted, this.env);
      // Old settings of a reloaded skills.yaml are not used again; a bound on the map is enough.
      if (this.environments.size >= 100) this.environments.clear();
      this.environments.set(key, registry);
    }
    return registry;
  }

  configuredSlots(): ModelSlot[] {
    return MODEL_SLOTS.filter((s) => this.slots[s]);
  }

  /** Resolves the model for a run from `configurable.model` (or the default slot). */
  resolve(selection: unknown, preferredSlot: ModelSlot = 'base'): ResolvedModel {
    if (selection !== undefined && selection !== null) {
      // Parse a scripted spec on its own so its errors name the exact field.
      const isScripted = typeof selection === 'object' && (selection as { provider?: unknown }).provider === 'scripted';
      const parsed = isScripted ? ScriptedModelSpec.safeParse(selection) : ModelSelection.safeParse(selection);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ModelConfigError(
          `Invalid config.configurable.model: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unrecognised'}. ` +
            `Use {"provider":"scripted","turns":[...]} or one of the slots ${MODEL_SLOTS.join(', ')}.`,
        );
      }
      const sel = parsed.data;
      if (typeof sel === 'object' && 'provider' in sel) {
        if (!this.allowScripted) {
          throw new ModelConfigError('The scripted model provider is disabled on this deployment (ALLOW_SCRIPTED_MODEL=false).');
        }
        return { model: new ScriptedChatModel(sel.turns), label: 'scripted', provider: 'scripted', modelId: 'scripted' };
      }
      return this.slot(typeof sel === 'string' ? sel : sel.slot);
    }
    return this.slot(preferredSlot);
  }

  /**
   * A one-off model of a slot (falling back like a run's) with its own token cap and temperature:
   * what an MCP server's sampling request runs on (handlers/sampling.ts). Never the scripted model.
   */
  oneOff(slot: ModelSlot, opts: { maxTokens: number; temperature?: number }): ResolvedModel {
    const base = this.slot(slot);
    const cfg = this.slots[base.label as ModelSlot]!;
    const model = new ChatOpenAI({
      apiKey: cfg.apiKey,
      model: cfg.modelId,
      temperature: opts.temperature ?? cfg.temperature,
      maxTokens: Math.min(opts.maxTokens, cfg.maxTokens ?? opts.maxTokens),
      configuration: { baseURL: cfg.baseUrl },
      maxRetries: 1,
    });
    return { ...base, model };
  }

  private slot(slot: ModelSlot): ResolvedModel {
    // Fall back to base when the preferred slot is not configured (seed 001 §1.7).
    const chosen: ModelSlot | undefined = this.slots[slot] ? slot : this.slots.base ? 'base' : this.configuredSlots()[0];
    if (!chosen) {
      throw new ModelConfigError(
        'No model is configured: set MODEL_BASE_API_KEY (and MODEL_BASE_BASE_URL, MODEL_BASE_ID) for an OpenAI-compatible endpoint, ' +
          'or pass config.configurable.model = {"provider":"scripted","turns":[...]} where the scripted provider is allowed.',
      );
    }
    const cfg = this.slots[chosen]!;
    let model = this.cache.get(chosen);
    if (!model) {
      model = new ChatOpenAI({
        apiKey: cfg.apiKey,
        model: cfg.modelId,
        temperature: cfg.temperature,
        ...(cfg.maxTokens !== undefined ? { maxTokens: cfg.maxTokens } : {}),
        configuration: { baseURL: cfg.baseUrl },
        maxRetries: 2,
      });
      this.cache.set(chosen, model);
    }
    return { model, label: chosen, provider: 'openai-compatible', modelId: cfg.modelId, accepts: cfg.accepts ?? TEXT_ONLY };
  }
}
