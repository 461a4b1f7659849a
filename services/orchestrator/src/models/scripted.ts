import { BaseChatModel, type BaseChatModelCallOptions, type BaseChatModelParams } from '@langchain/core/language_models/chat_models';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { z } from 'zod';

/** One assistant turn a scripted model replays. */
export const ScriptedTurn = z
  .object({
    content: z.string().optional(),
    tool_calls: z
      .array(
        z.object({
          name: z.string().min(1),
          args: z.record(z.string(), z.unknown()).default({}),
          id: z.string().min(1).optional(),
        }),
      )
      .optional(),
    delay_ms: z.number().int().min(0).max(600_000).optional(),
    /** The usage this turn reports (token budgets are tested with it); absent: about 4 characters a token. */
    usage: z
      .object({ input_tokens: z.number().int().min(0), output_tokens: z.number().int().min(0) })
      .strict()
      .optional(),
  })
  .strict();
export type ScriptedTurn = z.infer<typeof ScriptedTurn>;

export const ScriptedModelSpec = z
  .object({
    provider: z.literal('scripted'),
    turns: z.array(ScriptedTurn).min(1).max(10_000),
  })
  .strict();
export type ScriptedModelSpec = z.infer<typeof ScriptedModelSpec>;

/**
 * `scripted_turn`: the 0-based turn to play. The agent loop passes the number
 * of model calls the run has made so far (checkpointed in state), so a
 * compaction summary call consumes a turn like any other call.
 */
export interface ScriptedCallOptions extends BaseChatModelCallOptions {
  scripted_turn?: number;
}

export class ScriptExhaustedError extends Error {
  override name = 'ScriptExhaustedError';
  readonly code = 'SCRIPT_EXHAUSTED';
}

/**
 * A chat model that replays a given list of assistant turns — for the offline
 * demo, tests and benchmarks. It never pretends to be a real model: its
 * `_llmType` and every message's `response_metadata.model_provider` say "scripted".
 *
 * Which turn to play never comes from an internal counter, so a run resumed
 * from a checkpoint on another worker replays the same turn: it is the
 * `scripted_turn` call option when given (the agent loop's per-run model call
 * count), else derived from the conversation: the number of AI messages after
 * the last human message.
 */
export class ScriptedChatModel extends BaseChatModel<ScriptedCallOptions> {
  readonly turns: ScriptedTurn[];

  constructor(turns: ScriptedTurn[], params: BaseChatModelParams = {}) {
    super(params);
    this.turns = turns;
  }

  _llmType(): string {
    return 'scripted';
  }

  /** Names of the tools the model was offered (bindTools); the script still decides which to call. */
  boundToolNames: string[] = [];

  /** Tools do not change what is played; their names are reported in `response_metadata.seen` for tests and demos. */
  override bindTools(tools: unknown[]): this {
    // A view of this model (same script, same instance behaviour) that remembers the tool names.
    const bound = Object.create(this) as this;
    bound.boundToolNames = tools.map(toolName).filter((n): n is string => n !== undefined);
    return bound;
  }

  static turnIndex(messages: BaseMessage[]): number {
    let idx = 0;
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]!;
      const t = m.getType();
      if (t === 'human') break;
      if (t === 'ai') idx++;
    }
    return idx;
  }

  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    const message = await this.play(messages, options);
    return { generations: [{ text: message.text, message }], llmOutput: { tokenUsage: message.usage_metadata } };
  }

  /**
   * Streaming (used when a client asked for token events): the turn's text in a few chunks, then
   * each tool call as chunks of its JSON arguments, then the usage and metadata — as a provider
   * streams, so clients without a network see tokens. The chunks concatenate to the `_generate` message.
   */
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const whole = await this.play(messages, options);
    const text = typeof whole.content === 'string' ? whole.content : '';
    const emit = async (chunk: AIMessageChunk) => {
      const gen = new ChatGenerationChunk({ text: typeof chunk.content === 'string' ? chunk.content : '', message: chunk });
      await runManager?.handleLLMNewToken(gen.text, undefined, undefined, undefined, undefined, { chunk: gen });
      return gen;
    };
    for (const piece of splitText(text, 4)) {
      options.signal?.throwIfAborted();
      yield await emit(new AIMessageChunk({ content: piece }));
    }
    for (const [index, tc] of whole.tool_calls!.entries()) {
      const args = JSON.stringify(tc.args);
      const half = Math.ceil(args.length / 2);
      yield await emit(
        new AIMessageChunk({ content: '', tool_call_chunks: [{ type: 'tool_call_chunk', index, id: tc.id, name: tc.name, args: args.slice(0, half) }] }),
      );
      yield await emit(new AIMessageChunk({ content: '', tool_call_chunks: [{ type: 'tool_call_chunk', index, args: args.slice(half) }] }));
    }
    yield await emit(new AIMessageChunk({ content: '', usage_metadata: whole.usage_metadata!, response_metadata: whole.response_metadata }));
  }

  /** The AI message of the turn to play. */
  private async play(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<AIMessage> {
    const index = options.scripted_turn ?? ScriptedChatModel.turnIndex(messages);
    const turn = this.turns[index];
    if (!turn) {
      throw new ScriptExhaustedError(
        `Scripted model has no turn #${index + 1}: the script has ${this.turns.length} turn(s). Add a final turn without tool_calls.`,
      );
    }
    if (turn.delay_ms) await abortableSleep(turn.delay_ms, options.signal);
    const content = turn.content ?? '';
    const toolCalls = (turn.tool_calls ?? []).map((tc, i) => ({
      // Deterministic ids: the same turn replayed after a crash yields the same call ids.
      id: tc.id ?? `call_s${index + 1}_${i + 1}`,
      name: tc.name,
      args: tc.args,
      type: 'tool_call' as const,
    }));
    const inputChars = messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content).length), 0);
    const outputChars = content.length + JSON.stringify(toolCalls).length;
    const input = turn.usage?.input_tokens ?? Math.ceil(inputChars / 4);
    const output = turn.usage?.output_tokens ?? Math.ceil(outputChars / 4);
    const usage = { input_tokens: input, output_tokens: output, total_tokens: input + output };
    return new AIMessage({
      content,
      tool_calls: toolCalls,
      usage_metadata: usage,
      response_metadata: {
        model_provider: 'scripted',
        model_name: 'scripted',
        turn: index + 1,
        // What this call was shown (never the system prompt's text): for tests of tool visibility and history trimming.
        seen: {
          messages: messages.length,
          history: messages.filter((m) => m.getType() !== 'system').map((m) => m.getType()),
          tools: this.boundToolNames,
        },
      },
    });
  }
}

/** `text` in at most `parts` pieces of about the same length (none when it is empty). */
export function splitText(text: string, parts: number): string[] {
  if (text === '') return [];
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function toolName(t: unknown): string | undefined {
  const o = t as { name?: unknown; function?: { name?: unknown } };
  if (typeof o?.function?.name === 'string') return o.function.name;
  return typeof o?.name === 'string' ? o.name : undefined;
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
