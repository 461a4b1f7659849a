import { describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { ModelRegistry, slotsFromEnv } from './registry.js';
import { ScriptedChatModel } from './scripted.js';
import { HumanMessage, AIMessage } from '@langchain/core/messages';

describe('slotsFromEnv', () => {
  it('reads canonical prefixes and the seed aliases MODEL_BASIC_ and MODEL_MULTIMODAL_', () => {
    const slots = slotsFromEnv({
      MODEL_BASIC_API_KEY: 'k1',
      MODEL_BASIC_BASE_URL: 'http://127.0.0.1:1/v1',
      MODEL_BASIC_ID: 'qwen',
      MODEL_MULTIMODAL_API_KEY: 'k2',
      MODEL_CHAT_API_KEY: 'k3',
      MODEL_CHAT_ID: 'chatty',
    });
    expect(slots.base).toMatchObject({ apiKey: 'k1', baseUrl: 'http://127.0.0.1:1/v1', modelId: 'qwen' });
    expect(slots.vision?.apiKey).toBe('k2');
    expect(slots.chat?.modelId).toBe('chatty');
    expect(slots.code).toBeUndefined();
  });

  it('prefers MODEL_BASE_ over the MODEL_BASIC_ alias', () => {
    expect(slotsFromEnv({ MODEL_BASE_API_KEY: 'a', MODEL_BASIC_API_KEY: 'b' }).base?.apiKey).toBe('a');
  });
});

describe('slotsFromEnv media flags', () => {
  it('lets the vision slot take images by default and any slot be marked with _VISION / _AUDIO', () => {
    const slots = slotsFromEnv({
      MODEL_BASE_API_KEY: 'k',
      MODEL_VISION_API_KEY: 'k',
      MODEL_CODE_API_KEY: 'k',
      MODEL_CODE_VISION: 'true',
      MODEL_CODE_AUDIO: '1',
    });
    expect(slots.base?.accepts).toEqual({ images: false, audio: false });
    expect(slots.vision?.accepts).toEqual({ images: true, audio: false });
    expect(slots.code?.accepts).toEqual({ images: true, audio: true });
    expect(slotsFromEnv({ MODEL_VISION_API_KEY: 'k', MODEL_VISION_VISION: 'false' }).vision?.accepts).toEqual({ images: false, audio: false });
    expect(new ModelRegistry(slots, false).resolve('code').accepts).toEqual({ images: true, audio: true });
  });

  it('names the variable of a flag that is not true or false', () => {
    expect(() => slotsFromEnv({ MODEL_BASE_API_KEY: 'k', MODEL_BASE_VISION: 'maybe' })).toThrow('MODEL_BASE_VISION must be true or false, got "maybe"');
  });
});

describe('ModelRegistry', () => {
  it('builds the scripted model when allowed', () => {
    const r = new ModelRegistry({}, true).resolve({ provider: 'scripted', turns: [{ content: 'x' }] });
    expect(r.provider).toBe('scripted');
    expect(r.model).toBeInstanceOf(ScriptedChatModel);
  });

  it('refuses the scripted model when the deployment disallows it', () => {
    expect(() => new ModelRegistry({}, false).resolve({ provider: 'scripted', turns: [{ content: 'x' }] })).toThrow(/disabled/);
  });

  it('names the bad field of an invalid model selection', () => {
    expect(() => new ModelRegistry({}, true).resolve({ provider: 'scripted', turns: [{ tool_calls: [{ args: {} }] }] })).toThrow(
      /turns\.0\.tool_calls\.0\.name/,
    );
  });

  it('explains how to configure a model when none is', () => {
    expect(() => new ModelRegistry({}, true).resolve(undefined)).toThrow(/MODEL_BASE_API_KEY/);
  });

  it('builds an OpenAI-compatible model for a configured slot and falls back to base', () => {
    const reg = new ModelRegistry({ base: { apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1', modelId: 'm', temperature: 0.2 } }, false);
    const r = reg.resolve('code');
    expect(r.label).toBe('base');
    expect(r.model).toBeInstanceOf(ChatOpenAI);
  });
});

describe('ScriptedChatModel', () => {
  it('plays the turn matching the number of AI messages since the last human message', async () => {
    const m = new ScriptedChatModel([{ content: 'one' }, { content: 'two' }]);
    expect((await m.invoke([new HumanMessage('a')])).content).toBe('one');
    expect((await m.invoke([new HumanMessage('a'), new AIMessage('one')])).content).toBe('two');
    expect((await m.invoke([new HumanMessage('a'), new AIMessage('one'), new HumanMessage('b')])).content).toBe('one');
  });

  it('plays the turn given by the scripted_turn call option when present', async () => {
    const m = new ScriptedChatModel([{ content: 'one' }, { content: 'two' }]);
    expect((await m.invoke([new HumanMessage('a')], { scripted_turn: 1 })).content).toBe('two');
  });

  it('says clearly when the script is exhausted', async () => {
    const m = new ScriptedChatModel([{ content: 'one' }]);
    await expect(m.invoke([new HumanMessage('a'), new AIMessage('one')])).rejects.toThrow(/no turn #2/);
  });

  it('labels its output as scripted', async () => {
    const out = await new ScriptedChatModel([{ content: 'x' }]).invoke([new HumanMessage('a')]);
    expect(out.response_metadata.model_provider).toBe('scripted');
  });
});
