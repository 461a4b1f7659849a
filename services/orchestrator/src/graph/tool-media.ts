/**
 * Images and audio of tool results (MCP tools: README "MCP servers", services/mcp-broker/README.md
 * "Images and vision models") on their way to the model.
 *
 * In the graph state a result with media is a ToolMessage whose content is its text followed by
 * LangChain's standard base64 data blocks (`{type: 'image' | 'audio', source_type: 'base64',
 * mime_type, data}`): the checkpoint is self-contained (forks, rewinds and replays see the pixels
 * the model saw, even after the workspace file changed), and the thread state shows what the
 * model was given. The broker bounds them (MCP_MAX_RESULT_MEDIA_BYTES per result).
 *
 * OpenAI's chat completions take only text in a `role: tool` message, and @langchain/openai passes
 * a ToolMessage's content array through as it is (the provider then refuses the image part). So
 * right before each model call, `mediaForModel` gives every such ToolMessage its text only and
 * puts the media of the current turn's results in one user message right after that group of
 * tool messages — `image_url` parts with data URLs, `input_audio` parts (wav/mp3) — when the
 * call's model accepts them. That message exists only in the request, never in the state, so
 * history trimming, @mention and routing rules that read "the latest user message", and the
 * transcript for clients are unaffected.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { TEXT_ONLY, type MediaAcceptance } from '../models/registry.js';
import type { ToolMedia } from '../tool-client.js';
import type { RunContext } from './state.js';

/** A tool result's image or audio as kept in the ToolMessage (LangChain's standard base64 data block). */
export type ToolMediaBlock = {
  type: 'image' | 'audio';
  source_type: 'base64';
  mime_type: string;
  data: string;
  metadata?: { saved_path?: string };
};

type TextBlock = { type: 'text'; text: string };

/** OpenAI's `input_audio` formats. */
const AUDIO_FORMATS: Readonly<Record<string, 'wav' | 'mp3'>> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/vnd.wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
};

export function isToolMediaBlock(p: unknown): p is ToolMediaBlock {
  if (!p || typeof p !== 'object') return false;
  const b = p as Record<string, unknown>;
  return (b.type === 'image' || b.type === 'audio') && b.source_type === 'base64' && typeof b.data === 'string' && typeof b.mime_type === 'string';
}

/** The media blocks of a message's content (none for string content). */
export function mediaBlocksOf(m: BaseMessage): ToolMediaBlock[] {
  return Array.isArray(m.content) ? (m.content as unknown[]).filter(isToolMediaBlock) : [];
}

/** Whether a model taking `accepts` can be given the block (audio: only the formats OpenAI takes). */
function accepted(b: ToolMediaBlock, accepts: MediaAcceptance): boolean {
  if (b.type === 'image') return accepts.images && b.mime_type.startsWith('image/');
  return accepts.audio && AUDIO_FORMATS[b.mime_type.toLowerCase()] !== undefined;
}

/**
 * The content of a tool result's ToolMessage: its text, followed by the media a model of the run
 * may take (`accepts`); only the text when there is none (unchanged behaviour for text models).
 */
export function toolResultContent(text: string, media: readonly ToolMedia[] | undefined, accepts: MediaAcceptance): string | Array<TextBlock | ToolMediaBlock> {
  const blocks = (media ?? [])
    .map((m): ToolMediaBlock => ({
      type: m.kind,
      source_type: 'base64',
      mime_type: m.mimeType,
      data: m.base64,
      ...(m.savedPath ? { metadata: { saved_path: m.savedPath } } : {}),
    }))
    .filter((b) => accepted(b, accepts));
  return blocks.length === 0 ? text : [{ type: 'text', text }, ...blocks];
}

const union = (a: MediaAcceptance, b: MediaAcceptance): MediaAcceptance => ({ images: a.images || b.images, audio: a.audio || b.audio });

/**
 * The media any model of the run may take: the run's own model (scripted, replay), else any
 * configured slot — the agent step routes a turn whose tool results carry images to the vision
 * slot (routing.ts), and each call strips what its own model does not take (`mediaForModel`).
 */
export function runAcceptance(ctx: Pick<RunContext, 'model' | 'router'>): MediaAcceptance {
  if (!ctx.router) return ctx.model.accepts ?? TEXT_ONLY;
  let acc = TEXT_ONLY;
  for (const slot of ctx.router.configured) acc = union(acc, ctx.router.forSlot(slot).accepts ?? TEXT_ONLY);
  return acc;
}

/** The text parts of a content array, joined (the ToolMessage's text without its media). */
function textOf(content: unknown[]): string {
  return content
    .map((p) => (typeof p === 'string' ? p : p && typeof p === 'object' && (p as TextBlock).type === 'text' ? String((p as TextBlock).text ?? '') : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** An OpenAI chat-completions user content part for a block. */
function openAiPart(b: ToolMediaBlock): Record<string, unknown> {
  if (b.type === 'image') return { type: 'image_url', image_url: { url: `data:${b.mime_type};base64,${b.data}` } };
  return { type: 'input_audio', input_audio: { data: b.data, format: AUDIO_FORMATS[b.mime_type.toLowerCase()] } };
}

/** Media parts sent with one model call at most (the newest of the turn): a request stays a sane size. */
export const MAX_MEDIA_PARTS_PER_CALL = 16;

/** Index of the latest human message, -1 when there is none. */
function lastHumanIndex(messages: readonly BaseMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (HumanMessage.isInstance(messages[i]!)) return i;
  return -1;
}

/**
 * The history as sent to a model taking `accepts`: every ToolMessage with media carries its text
 * only; the media of the results since the latest user message that the model takes follow their
 * group of tool messages as one user message (`image_url` / `input_audio` parts, each introduced
 * by the tool and call it came from), at most `maxParts` of them, the newest. Earlier turns' media
 * are not sent again: their text names the saved file. Messages without media are passed as they are (same objects).
 */
export function mediaForModel(history: readonly BaseMessage[], accepts: MediaAcceptance, maxParts = MAX_MEDIA_PARTS_PER_CALL): BaseMessage[] {
  const currentTurn = lastHumanIndex(history);
  // A turn that called image tools many times sends only its newest `maxParts` blocks.
  let eligible = 0;
  history.forEach((m, i) => {
    if (i > currentTurn && ToolMessage.isInstance(m)) eligible += mediaBlocksOf(m).filter((b) => accepted(b, accepts)).length;
  });
  let skip = Math.max(0, eligible - maxParts);
  const out: BaseMessage[] = [];
  let pending: Array<Record<string, unknown>> = [];
  history.forEach((m, i) => {
    const blocks = ToolMessage.isInstance(m) ? mediaBlocksOf(m) : [];
    if (blocks.length === 0) {
      out.push(m);
    } else {
      const t = m as ToolMessage;
      out.push(
        new ToolMessage({
          content: textOf(t.content as unknown[]),
          tool_call_id: t.tool_call_id,
          ...(t.name ? { name: t.name } : {}),
          ...(t.status ? { status: t.status } : {}),
          ...(t.id ? { id: t.id } : {}),
        }),
      );
      const taken = i > currentTurn ? blocks.filter((b) => accepted(b, accepts)) : [];
      const older = Math.min(skip, taken.length);
      skip -= older;
      const given = taken.slice(older);
      if (given.length > 0) {
        const from = `${t.name ?? 'tool'} (tool call ${t.tool_call_id})`;
        pending.push({ type: 'text', text: `${given.length === 1 ? 'Media' : `${given.length} media`} returned by ${from}:` });
        for (const b of given) pending.push(openAiPart(b));
      }
    }
    const next = history[i + 1];
    if (pending.length > 0 && !(next && ToolMessage.isInstance(next))) {
      out.push(new HumanMessage({ content: pending as never }));
      pending = [];
    }
  });
  return out;
}
