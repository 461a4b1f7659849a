/**
 * Tool results' images and audio on their way to the model (issue 14, graph/tool-media.ts): what
 * the ToolMessage keeps, the request a vision/audio model gets (media in a user message after the
 * tool group, as @langchain/openai sends it), and text-only models seeing the text as before.
 */
import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { convertMessagesToCompletionsMessageParams } from '@langchain/openai';
import { TEXT_ONLY, type ResolvedModel } from '../models/registry.js';
import { estimateTokens, MEDIA_PART_CHARS } from '../compaction.js';
import { hasImages } from '../routing.js';
import type { ToolMedia } from '../tool-client.js';
import { mediaForModel, runAcceptance, toolResultContent } from './tool-media.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
const WAV = Buffer.from('RIFF....WAVEfmt ').toString('base64');
const image: ToolMedia = { kind: 'image', mimeType: 'image/png', base64: PNG, savedPath: 'outputs/mcp/s-pic-1.png' };
const wav: ToolMedia = { kind: 'audio', mimeType: 'audio/wav', base64: WAV, savedPath: '' };
const ogg: ToolMedia = { kind: 'audio', mimeType: 'audio/ogg', base64: WAV, savedPath: '' };
const TEXT = '[image saved to outputs/mcp/s-pic-1.png (image/png, 16 bytes)]';
const VISION = { images: true, audio: false };
const ALL = { images: true, audio: true };

describe('toolResultContent', () => {
  it('keeps the text alone for a text-only run (unchanged behaviour)', () => {
    expect(toolResultContent(TEXT, [image, wav], TEXT_ONLY)).toBe(TEXT);
    expect(toolResultContent(TEXT, undefined, ALL)).toBe(TEXT);
  });

  it('appends the media the run takes as base64 data blocks; audio only in wav/mp3', () => {
    expect(toolResultContent(TEXT, [image, wav, ogg], VISION)).toEqual([
      { type: 'text', text: TEXT },
      { type: 'image', source_type: 'base64', mime_type: 'image/png', data: PNG, metadata: { saved_path: 'outputs/mcp/s-pic-1.png' } },
    ]);
    expect(toolResultContent(TEXT, [image, wav, ogg], ALL)).toEqual([
      { type: 'text', text: TEXT },
      { type: 'image', source_type: 'base64', mime_type: 'image/png', data: PNG, metadata: { saved_path: 'outputs/mcp/s-pic-1.png' } },
      { type: 'audio', source_type: 'base64', mime_type: 'audio/wav', data: WAV },
    ]);
  });
});

describe('runAcceptance', () => {
  const model = (accepts?: ResolvedModel['accepts']) => ({
    model: {} as never,
    label: 'x',
    provider: 'openai-compatible' as const,
    modelId: 'x',
    ...(accepts ? { accepts } : {}),
  });
  it('is the run model’s without a router (scripted: text only), else any configured slot’s', () => {
    expect(runAcceptance({ model: model() })).toEqual(TEXT_ONLY);
    const slots = { base: model(TEXT_ONLY), vision: model(VISION), code: model({ images: false, audio: true }) };
    const router = (configured: Array<keyof typeof slots>) => ({
      configured: new Set(configured),
      forSlot: (s: string) => slots[s as keyof typeof slots] ?? slots.base,
    });
    expect(runAcceptance({ model: model(), router: router(['base']) })).toEqual(TEXT_ONLY);
    expect(runAcceptance({ model: model(), router: router(['base', 'vision']) })).toEqual(VISION);
    expect(runAcceptance({ model: model(), router: router(['base', 'vision', 'code']) })).toEqual(ALL);
  });
});

/** A turn: the user asks, the model calls two tools (one returns an image and audio), the tools answer. */
function turn(question: string, ids: [string, string]): BaseMessage[] {
  return [
    new HumanMessage(question),
    new AIMessage({
      content: '',
      tool_calls: [
        { id: ids[0], name: 'pic', args: {} },
        { id: ids[1], name: 'echo', args: {} },
      ],
    }),
    new ToolMessage({ content: toolResultContent(TEXT, [image, wav], ALL), tool_call_id: ids[0], name: 'pic' }),
    new ToolMessage({ content: 'echoed', tool_call_id: ids[1], name: 'echo' }),
  ];
}

describe('mediaForModel', () => {
  it('gives a vision model the tool text, then one user message with the image as an image_url data URL', () => {
    const history = turn('show me', ['c1', 'c2']);
    const out = mediaForModel(history, VISION);
    expect(out).toHaveLength(5);
    expect(out.slice(0, 2)).toEqual(history.slice(0, 2));
    expect(out[2]).toBeInstanceOf(ToolMessage);
    expect(out[2]).toMatchObject({ content: TEXT, tool_call_id: 'c1', name: 'pic' });
    expect(out[3]).toBe(history[3]);
    expect(out[4]).toBeInstanceOf(HumanMessage);
    expect(out[4]!.content).toEqual([
      { type: 'text', text: 'Media returned by pic (tool call c1):' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
    ]);
  });

  it('adds audio as input_audio for a model that takes audio; the request @langchain/openai builds keeps tool text-only', () => {
    const out = mediaForModel(turn('show me', ['c1', 'c2']), ALL);
    const params = convertMessagesToCompletionsMessageParams({ messages: out, model: 'gpt-4o' });
    expect(params.map((p) => p.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    expect(params[2]).toMatchObject({ role: 'tool', tool_call_id: 'c1', content: TEXT });
    expect(params[4]!.content).toEqual([
      { type: 'text', text: '2 media returned by pic (tool call c1):' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'input_audio', input_audio: { data: WAV, format: 'wav' } },
    ]);
  });

  it('gives a text-only model the text only, with no user message added', () => {
    const history = turn('show me', ['c1', 'c2']);
    const out = mediaForModel(history, TEXT_ONLY);
    expect(out.map((m) => m.getType())).toEqual(['human', 'ai', 'tool', 'tool']);
    expect(out[2]!.content).toBe(TEXT);
  });

  it('sends media of the current turn only: an earlier turn’s results keep their text', () => {
    const history = [...turn('first', ['a1', 'a2']), new AIMessage('it is a logo'), ...turn('again', ['b1', 'b2'])];
    const out = mediaForModel(history, VISION);
    const users = out.filter((m) => HumanMessage.isInstance(m));
    expect(users.map((m) => (typeof m.content === 'string' ? m.content : (m.content[0] as { text: string }).text))).toEqual([
      'first',
      'again',
      'Media returned by pic (tool call b1):',
    ]);
    expect(out.filter((m) => ToolMessage.isInstance(m)).every((m) => typeof m.content === 'string')).toBe(true);
  });
});

describe('mediaForModel caps', () => {
  it('sends only the newest parts of the turn beyond the per-call cap', () => {
    const calls = ['c1', 'c2', 'c3'];
    const history: BaseMessage[] = [
      new HumanMessage('three pictures'),
      new AIMessage({ content: '', tool_calls: calls.map((id) => ({ id, name: 'pic', args: {} })) }),
      ...calls.map((id) => new ToolMessage({ content: toolResultContent(TEXT, [image], VISION), tool_call_id: id, name: 'pic' })),
    ];
    const out = mediaForModel(history, VISION, 2);
    expect(out).toHaveLength(6);
    expect((out[5]!.content as Array<{ type: string; text?: string }>).filter((p) => p.type === 'text').map((p) => p.text)).toEqual([
      'Media returned by pic (tool call c2):',
      'Media returned by pic (tool call c3):',
    ]);
  });
});

describe('a ToolMessage with media elsewhere in the orchestrator', () => {
  const history = turn('show me', ['c1', 'c2']);
  it('routes the turn to the vision slot (a tool result since the latest user message has an image)', () => {
    expect(hasImages(history)).toBe(true);
    expect(hasImages([...history, new AIMessage('done'), new HumanMessage('thanks')])).toBe(false);
  });
  it('counts each media part as MEDIA_PART_CHARS, not its base64 length', () => {
    const big = new ToolMessage({ content: toolResultContent('x', [{ ...image, base64: 'A'.repeat(400_000) }], VISION), tool_call_id: 'c', name: 'pic' });
    const text = new ToolMessage({ content: 'x', tool_call_id: 'c', name: 'pic' });
    const extra = estimateTokens([big]) - estimateTokens([text]);
    expect(extra).toBeGreaterThan(MEDIA_PART_CHARS / 4 - 20);
    expect(extra).toBeLessThan(MEDIA_PART_CHARS / 4 + 20);
  });
});
